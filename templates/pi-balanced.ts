// git balanced's hooks for Pi, loaded with `pi -e <this file>`. Pi has no hook commands of its own, so this
// extension hands each event to `git balanced hook ...` with the JSON Claude Code and Codex send, and turns
// the answer into Pi's: a refused tool call is blocked with its reason; the lead's unread inbox is injected
// before it starts and handed to it again when it ends. A worker (GIT_BALANCED_JOB set) gets the first, a
// lead the others.
// {part pi-part.ts}

// Pi asks no permission for its tools, so the mode a lead's hooks report is named, in Claude Code's words, by
// the tools it was given: bash runs unasked (bypassPermissions), edits alone (acceptEdits), reads only (plan).
function mode(pi: any): string {
  const tools: string[] = typeof pi.getActiveTools === "function" ? pi.getActiveTools() : [];
  if (!tools.length || tools.includes("bash")) return "bypassPermissions";
  return tools.includes("edit") || tools.includes("write") ? "acceptEdits" : "plan";
}

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) {
    guard(pi, "pre-tool-use");
    return;
  }
  // A lead's edit of a path one of its running pieces owns is refused (`git balanced hook lead-pre-tool-use`).
  guard(pi, "lead-pre-tool-use");
  inbox(pi, () => ({ permission_mode: mode(pi) }));
}
