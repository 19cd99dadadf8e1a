// The part each of git balanced's extensions for Pi starts with (pi-balanced.ts, pi-lead.ts, pi-chief.ts): each
// file Pi loads is whole, with this written into it where it names it (bundled.template_text).
import { spawn } from "node:child_process";

const BALANCED: string[] = {balanced_argv};

// One `git balanced ARGS` in `cwd`, handed `input` on stdin: its exit code and what it printed.
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

// One `git balanced hook NAME` handed the event's JSON as Claude Code and Codex send it: its answer ({} for
// none), an exit 2 a block with its reason.
async function hook(name: string, input: Record<string, unknown>, cwd: string): Promise<any> {
  const r = await run(["hook", name], JSON.stringify({ ...input, agent: "pi" }), cwd);
  if (r.code === 2) return { decision: "block", reason: r.err.trim() };
  try {
    return r.out.trim() ? JSON.parse(r.out) : {};
  } catch {
    return {};
  }
}

// Each tool call first goes to `git balanced hook NAME` (a PreToolUse), and one it refuses is blocked with its
// reason.
function guard(pi: any, name: string): void {
  pi.on("tool_call", async (event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const out = await hook(name, { hook_event_name: "PreToolUse", tool_name: event.toolName, tool_input: event.input, cwd }, cwd);
    const spec = out?.hookSpecificOutput ?? {};
    if (spec.permissionDecision === "deny") return { block: true, reason: spec.permissionDecisionReason };
    if (out?.decision === "block") return { block: true, reason: out.reason };
    return undefined;
  });
}

// The tools of `git balanced mcp`, each call one `git balanced mcp [--chief] --call TOOL JSON` (`call` is all of
// it before TOOL): the same tool, the same result, the same refusals.
function tools(pi: any, specs: { name: string; description: string; parameters: any }[], label: string,
               call: string[]): void {
  for (const tool of specs) {
    pi.registerTool({
      name: tool.name,
      label: `${label} ${tool.name}`,
      description: tool.description,
      parameters: tool.parameters,
      async execute(_id: string, params: any, _signal: any, _update: any, ctx: any) {
        const r = await run([...call, tool.name, JSON.stringify(params ?? {})], "", ctx?.cwd ?? process.cwd());
        if (r.code !== 0) throw new Error((r.err || r.out).trim() || `git balanced ${call.join(" ")} ${tool.name} failed`);
        return { content: [{ type: "text", text: r.out.trim() }], details: JSON.parse(r.out) };
      },
    });
  }
}

// The lead's unread inbox: added before each prompt (`hook user-prompt-submit`), and handed to it again when it
// ends if news came meanwhile (`hook stop`). `more()` adds to each hook's input.
function inbox(pi: any, more: () => Record<string, unknown>): void {
  pi.on("before_agent_start", async (event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const input = { hook_event_name: "UserPromptSubmit", ...more(), model: model(ctx), prompt: event.prompt, cwd };
    const out = await hook("user-prompt-submit", input, cwd);
    const text = out?.hookSpecificOutput?.additionalContext;
    if (text) return { message: { customType: "git-balanced", content: text, display: true } };
    return undefined;
  });
  pi.on("agent_end", async (_event: any, ctx: any) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const input = { hook_event_name: "Stop", ...more(), model: model(ctx), stop_hook_active: false, cwd };
    const out = await hook("stop", input, cwd);
    if (out?.decision === "block" && out.reason) pi.sendUserMessage(out.reason, { deliverAs: "followUp" });
  });
}

// The lead's model as a worker's `--model` takes it (provider/id), so that its Pi workers start on it.
function model(ctx: any): string | undefined {
  const m = ctx?.model;
  return m?.id ? (m.provider ? `${m.provider}/${m.id}` : m.id) : undefined;
}
