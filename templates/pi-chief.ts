// git balanced's chief for Pi, written by `git balanced chief on --agent pi` (`chief off` removes it), and by
// `git balanced chief start --agent pi` for its headless chief. Pi has no MCP, so this extension registers the
// chief's tools itself, with the schemas of `git balanced mcp --chief`, each call one `git balanced mcp --chief
// --call TOOL JSON`. Its tool_call hook refuses what the chief never runs (land, ship, answer --allow, a push).
// {part pi-part.ts}

const TOOLS: { name: string; description: string; parameters: any }[] = {tools};

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) return;
  tools(pi, TOOLS, "chief", ["mcp", "--chief", "--call"]);
  guard(pi, "chief-pre-tool-use");
}
