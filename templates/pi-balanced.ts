// git balanced's hooks for Pi, loaded with `pi -e <this file>`. Pi has no hook commands of its own, so this
// extension hands each event to `git balanced hook ...` with the JSON Claude Code and Codex send, and turns
// the answer into Pi's: a refused tool call is blocked with its reason; the lead's unread inbox is injected
// before it starts and handed to it again when it ends. A worker (GIT_BALANCED_JOB set) gets the first, a
// lead the others.
import { spawn } from "node:child_process";

const BALANCED: string[] = {balanced_argv};

function hook(name: string, input: Record<string, unknown>): Promise<any> {
  return new Promise((resolve) => {
    const [cmd, ...args] = BALANCED;
    const child = spawn(cmd, [...args, "hook", name], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => resolve({ error: String(e) }));
    child.on("close", (code) => {
      if (code === 2) return resolve({ decision: "block", reason: err.trim() });
      try {
        resolve(out.trim() ? JSON.parse(out) : {});
      } catch {
        resolve({});
      }
    });
    child.stdin.end(JSON.stringify({ ...input, agent: "pi" }));
  });
}

// Pi asks no permission for its tools, so the mode a lead's hooks report is named, in Claude Code's words, by
// the tools it was given: bash runs unasked (bypassPermissions), edits alone (acceptEdits), reads only (plan).
function mode(pi: any): string {
  const tools: string[] = typeof pi.getActiveTools === "function" ? pi.getActiveTools() : [];
  if (!tools.length || tools.includes("bash")) return "bypassPermissions";
  return tools.includes("edit") || tools.includes("write") ? "acceptEdits" : "plan";
}

// The lead's model as a worker's `--model` takes it (provider/id), so that its Pi workers start on it.
function model(ctx: any): string | undefined {
  const m = ctx?.model;
  return m?.id ? (m.provider ? `${m.provider}/${m.id}` : m.id) : undefined;
}

export default function (pi: any) {
  if (process.env.GIT_BALANCED_JOB) {
    pi.on("tool_call", async (event: any, ctx: any) => {
      const out = await hook("pre-tool-use", {
        hook_event_name: "PreToolUse",
        tool_name: event.toolName,
        tool_input: event.input,
        cwd: ctx?.cwd ?? process.cwd(),
      });
      const spec = out?.hookSpecificOutput ?? {};
      if (spec.permissionDecision === "deny") return { block: true, reason: spec.permissionDecisionReason };
      if (out?.decision === "block") return { block: true, reason: out.reason };
      return undefined;
    });
    return;
  }
  // A lead's edit of a path one of its running pieces owns is refused (`git balanced hook lead-pre-tool-use`).
  pi.on("tool_call", async (event: any, ctx: any) => {
    const out = await hook("lead-pre-tool-use", {
      hook_event_name: "PreToolUse",
      tool_name: event.toolName,
      tool_input: event.input,
      cwd: ctx?.cwd ?? process.cwd(),
    });
    const spec = out?.hookSpecificOutput ?? {};
    if (spec.permissionDecision === "deny") return { block: true, reason: spec.permissionDecisionReason };
    return undefined;
  });
  pi.on("before_agent_start", async (event: any, ctx: any) => {
    const out = await hook("user-prompt-submit", {
      hook_event_name: "UserPromptSubmit",
      permission_mode: mode(pi),
      model: model(ctx),
      prompt: event.prompt,
      cwd: ctx?.cwd ?? process.cwd(),
    });
    const text = out?.hookSpecificOutput?.additionalContext;
    if (text) return { message: { customType: "git-balanced", content: text, display: true } };
    return undefined;
  });
  pi.on("agent_end", async (_event: any, ctx: any) => {
    const out = await hook("stop", {
      hook_event_name: "Stop", permission_mode: mode(pi), model: model(ctx), stop_hook_active: false,
      cwd: ctx?.cwd ?? process.cwd(),
    });
    if (out?.decision === "block" && out.reason) pi.sendUserMessage(out.reason, { deliverAs: "followUp" });
  });
}
