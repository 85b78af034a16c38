// The official AG-UI client (@ag-ui/client, HttpAgent) against a real `tether serve`
// (tests/serve/test_agui_client.py starts the server and prepares the threads).
//
//   node agui_client.mjs BASE_URL rebuild THREAD   a fresh client reconnects without an id,
//                                                  rebuilds the thread and answers its interrupt
//   node agui_client.mjs BASE_URL tool THREAD      a front-end tool round trip
//   node agui_client.mjs BASE_URL ask THREAD       its first half: the run ends with the pending call
//   node agui_client.mjs BASE_URL answer THREAD    its second half, in another process, the
//                                                  messages the first half held on stdin
//   node agui_client.mjs BASE_URL unknown THREAD   an input with fields AG-UI does not declare
//
// Prints one JSON object (what the client holds) on stdout; the Python test checks it.
import { HttpAgent } from "@ag-ui/client";

const [base, scenario, thread] = process.argv.slice(2);

/** HttpAgent reading the reconnect endpoint (GET, no id: the thread's latest AG-UI run). */
class ReconnectAgent extends HttpAgent {
  requestInit(input) {
    const init = super.requestInit(input);
    return { method: "GET", headers: { Accept: "text/event-stream" }, signal: init.signal };
  }
}

/** HttpAgent that adds fields AG-UI does not declare to what it sends. */
class FutureAgent extends HttpAgent {
  requestInit(input) {
    const init = super.requestInit(input);
    const body = JSON.parse(init.body);
    body.futureField = { from: "a later protocol" };
    body.messages[body.messages.length - 1].mood = "cheerful";
    return { ...init, body: JSON.stringify(body) };
  }
}

/** The outcomes a run reported to a subscriber, and the events it saw. */
function recorder() {
  const seen = { types: [], finished: [] };
  const subscriber = {
    onEvent({ event }) {
      seen.types.push(event.type);
    },
    onRunFinishedEvent(params) {
      seen.finished.push({
        outcome: params.outcome,
        pendingToolCallIds: params.pendingToolCallIds ?? null,
        interrupts: params.interrupts ?? null,
      });
    },
    onRunErrorEvent({ event }) {
      seen.error = event.message;
    },
  };
  return { seen, subscriber };
}

async function rebuild() {
  const fresh = new ReconnectAgent({ url: `${base}/agents/helper/agui/${thread}`, threadId: thread });
  const first = recorder();
  await fresh.runAgent({}, first.subscriber);
  const rebuilt = { messages: structuredClone(fresh.messages), pendingInterrupts: structuredClone(fresh.pendingInterrupts) };
  // answer the interrupt with the rebuilt client's own state
  const agent = new HttpAgent({ url: `${base}/agents/helper/agui`, threadId: thread, initialMessages: fresh.messages });
  const resume = fresh.pendingInterrupts.map((item) => ({ interruptId: item.id, status: "resolved", payload: "yes" }));
  const second = recorder();
  await agent.runAgent({ resume }, second.subscriber);
  return { rebuilt, reconnect: first.seen, answered: second.seen, messages: agent.messages, pendingInterrupts: agent.pendingInterrupts };
}

const TOOLS = [
  {
    name: "pick_color",
    description: "Ask the user for a color",
    parameters: { type: "object", properties: { shade: { type: "string" } }, required: ["shade"] },
  },
];

async function ask() {
  const agent = new HttpAgent({ url: `${base}/agents/painter/agui`, threadId: thread });
  agent.addMessage({ id: "u-1", role: "user", content: "paint it" });
  const first = recorder();
  await agent.runAgent({ tools: TOOLS }, first.subscriber);
  const asked = first.seen.finished.at(-1)?.pendingToolCallIds ?? [];
  const calls = agent.messages.flatMap((message) => message.toolCalls ?? []).filter((call) => asked.includes(call.id));
  return { first: first.seen, calls, messages: agent.messages };
}

async function answer(held) {
  const agent = new HttpAgent({ url: `${base}/agents/painter/agui`, threadId: thread, initialMessages: held.messages });
  for (const call of held.calls) {
    // the application runs its tool and adds the result as a tool message
    const args = JSON.parse(call.function.arguments);
    agent.addMessage({ id: `result-${call.id}`, role: "tool", toolCallId: call.id, content: args.shade === "warm" ? "teal" : "grey" });
  }
  const second = recorder();
  await agent.runAgent({ tools: TOOLS }, second.subscriber);
  return { second: second.seen, messages: agent.messages };
}

async function tool() {
  const first = await ask();
  return { ...first, ...(await answer(first)) };
}

async function stdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function unknown() {
  const agent = new FutureAgent({ url: `${base}/agents/chat/agui`, threadId: thread });
  agent.addMessage({ id: "u-1", role: "user", content: "hi" });
  const run = recorder();
  await agent.runAgent({}, run.subscriber);
  return { run: run.seen, messages: agent.messages };
}

const scenarios = { rebuild, tool, ask, answer: async () => answer(await stdin()), unknown };
try {
  const result = await scenarios[scenario]();
  process.stdout.write(JSON.stringify(result) + "\n");
} catch (error) {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
}
