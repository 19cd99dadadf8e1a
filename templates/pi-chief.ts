// git balanced's chief for Pi, written by `git balanced chief on --agent pi` (`chief off` removes it), and by
// `git balanced chief start --agent pi` for its headless chief. Pi has no MCP, so this extension registers the
// chief's tools itself, with the schemas of `git balanced mcp --chief`, each call one `git balanced mcp --chief
// --call TOOL JSON`. Its tool_call hook refuses what the chief never runs (land, ship, answer --allow, a push).
import { spawn } from "node:child_process";

const BALANCED: string[] = {balanced_argv};
const TOOLS: { name: string; description: string; parameters: any }[] = {tools};

function run(args: string[], input: string, cwd: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const [cmd, ...pre] = BALANCED;
    const child = spawn(cmd, [...pre, ...args], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => resolve({ code: 127, out: "", err: String(e) }));
    child.on("close", (code) => resolve({ code: code ?? 1, out, err }));
    child.stdin.end(input);
  });
}

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) return;
  for (const tool of TOOLS) {
    pi.registerTool({
      name: tool.name,
      label: `chief ${tool.name}`,
      description: tool.description,
      parameters: tool.parameters,
      async execute(_id: string, params: any, _signal: any, _update: any, ctx: any) {
        const r = await run(["mcp", "--chief", "--call", tool.name, JSON.stringify(params ?? {})], "",
                            ctx?.cwd ?? process.cwd());
        if (r.code !== 0) throw new Error((r.err || r.out).trim() || `git balanced mcp --chief --call ${tool.name} failed`);
        return { content: [{ type: "text", text: r.out.trim() }], details: JSON.parse(r.out) };
      },
    });
  }
  pi.on("tool_call", async (event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const input = { hook_event_name: "PreToolUse", tool_name: event.toolName, tool_input: event.input, cwd, agent: "pi" };
    const r = await run(["hook", "chief-pre-tool-use"], JSON.stringify(input), cwd);
    let out: any = {};
    try {
      out = r.out.trim() ? JSON.parse(r.out) : {};
    } catch {
      out = {};
    }
    const spec = out?.hookSpecificOutput ?? {};
    if (spec.permissionDecision === "deny") return { block: true, reason: spec.permissionDecisionReason };
    return undefined;
  });
}
