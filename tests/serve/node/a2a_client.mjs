// The official A2A JavaScript SDK (@a2a-js/sdk 1.3) against a running `tether serve`:
// reads {"url": BASE} on stdin, talks to the agents "chat" and "asker" through ClientFactory
// (the card, then JSON-RPC), and prints what it saw as JSON (tests/serve/test_a2a.py checks it).
import { ClientFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

const message = (id, text, extra = {}) => ({
  messageId: id, role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }], ...extra,
});
const state = (task) => TaskState[task.status.state];
const answers = (task) => task.artifacts.flatMap((a) => a.parts.map((p) => p.content?.value));

const factory = new ClientFactory();
const chat = await factory.createFromUrl(`${input.url}/agents/chat/a2a/`);
const sent = await chat.sendMessage({ message: message("js-1", "hi") });
const streamed = [];
for await (const event of chat.sendMessageStream({ message: message("js-2", "more", { contextId: sent.contextId }) })) {
  const payload = event.payload;
  streamed.push(payload.$case === "task" || payload.$case === "statusUpdate"
    ? [payload.$case, TaskState[(payload.value.status ?? {}).state]]
    : [payload.$case]);
}
const got = await chat.getTask({ id: sent.id });

const asker = await factory.createFromUrl(`${input.url}/agents/asker/a2a/`);
const asked = await asker.sendMessage({ message: message("js-3", "deploy it") });
const answered = await asker.sendMessage({ message: message("js-4", "yes", { taskId: asked.id }) });

process.stdout.write(JSON.stringify({
  sent: { id: sent.id, context: sent.contextId, state: state(sent), answers: answers(sent) },
  streamed,
  got: { state: state(got), answers: answers(got), history: got.history.length },
  asked: { state: state(asked), interrupts: asked.status.message.parts.filter((p) => p.content?.$case === "data").map((p) => p.content.value) },
  answered: { state: state(answered), answers: answers(answered) },
}));
