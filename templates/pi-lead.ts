// git balanced's lead for Pi, written by `git balanced lead on --agent pi` (`lead off` removes it), or the
// extension of the Pi package `git balanced lead plugin` writes (`pi install DIR/plugins/balanced`). Pi has no
// MCP, so this extension registers the lead's tools itself, with the schemas of `git balanced mcp`, and each
// call is one `git balanced mcp --call TOOL JSON`: the same tool, the same result, the same refusals. It also
// hands the lead its unread inbox before it starts and again when it ends, as the Claude Code and Codex
// hooks do. Inside a worker (GIT_BALANCED_JOB set) it does nothing: a worker is no lead.
// {part pi-part.ts}

const TOOLS: { name: string; description: string; parameters: any }[] = {tools};

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) return;
  tools(pi, TOOLS, "balanced", ["mcp", "--call"]);
  // An edit of a path one of its running pieces owns is refused (`git balanced hook lead-pre-tool-use`).
  guard(pi, "lead-pre-tool-use");
  // A headless lead (`git balanced lead start`) is handed its news as turns: no hooks then.
  if (process.env.GIT_BALANCED_HEADLESS_LEAD) return;
  inbox(pi, () => ({}));
}
