// git balanced's lead for Pi, written by `git balanced lead on --agent pi` (`lead off` removes it), or the
// extension of the Pi package `git balanced lead plugin` writes (`pi install DIR/plugins/balanced`). Pi has no
// MCP, so this extension registers the lead's tools itself, with the schemas of `git balanced mcp`, and each
// call is one `git balanced mcp --call TOOL JSON`: the same tool, the same result, the same refusals. It also
// hands the lead its unread inbox before it starts and again when it ends, as the Claude Code and Codex
// hooks do. Inside a worker (GIT_BALANCED_JOB set) it does nothing: a worker is no lead.
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

async function hook(name: string, input: Record<string, unknown>, cwd: string): Promise<any> {
  const r = await run(["hook", name], JSON.stringify({ ...input, agent: "pi" }), cwd);
  try {
    return r.out.trim() ? JSON.parse(r.out) : {};
  } catch {
    return {};
  }
}

// The lead's model as a worker's `--model` takes it (provider/id), so that its Pi workers start on it.
function model(ctx: any): string | undefined {
  const m = ctx?.model;
  return m?.id ? (m.provider ? `${m.provider}/${m.id}` : m.id) : undefined;
}

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) return;
  for (const tool of TOOLS) {
    pi.registerTool({
      name: tool.name,
      label: `balanced ${tool.name}`,
      description: tool.description,
      parameters: tool.parameters,
      async execute(_id: string, params: any, _signal: any, _update: any, ctx: any) {
        const r = await run(["mcp", "--call", tool.name, JSON.stringify(params ?? {})], "", ctx?.cwd ?? process.cwd());
        if (r.code !== 0) throw new Error((r.err || r.out).trim() || `git balanced mcp --call ${tool.name} failed`);
        return { content: [{ type: "text", text: r.out.trim() }], details: JSON.parse(r.out) };
      },
    });
  }
  // An edit of a path one of its running pieces owns is refused (`git balanced hook lead-pre-tool-use`).
  pi.on("tool_call", async (event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const out = await hook("lead-pre-tool-use", { hook_event_name: "PreToolUse", tool_name: event.toolName, tool_input: event.input, cwd }, cwd);
    const spec = out?.hookSpecificOutput ?? {};
    if (spec.permissionDecision === "deny") return { block: true, reason: spec.permissionDecisionReason };
    return undefined;
  });
  // A headless lead (`git balanced lead start`) is handed its news as turns: no hooks then.
  if (process.env.GIT_BALANCED_HEADLESS_LEAD) return;
  pi.on("before_agent_start", async (event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const input = { hook_event_name: "UserPromptSubmit", prompt: event.prompt, model: model(ctx), cwd };
    const out = await hook("user-prompt-submit", input, cwd);
    const text = out?.hookSpecificOutput?.additionalContext;
    if (text) return { message: { customType: "git-balanced", content: text, display: true } };
    return undefined;
  });
  pi.on("agent_end", async (_event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const out = await hook("stop", { hook_event_name: "Stop", stop_hook_active: false, model: model(ctx), cwd }, cwd);
    if (out?.decision === "block" && out.reason) pi.sendUserMessage(out.reason, { deliverAs: "followUp" });
  });
}
