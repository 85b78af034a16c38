// A real @strands-agents/sdk agent with a scripted model, for Tether's TypeScript snapshot tests
// (tests/snapshot/test_typescript.py). No network: the model replays the responses it is given.
//
// Reads one JSON request on stdin and writes one JSON reply on stdout:
//   request: {
//     "snapshot": <a snapshot document to load first, or absent for a new agent>,
//     "systemPrompt": ..., "state": {...}, "modelState": {...},
//     "messages": [...]                                             (a new agent's settings),
//     "prompt": "..." | [content blocks] | [interrupt responses]    (one turn of the agent)
//     "responses": [{"text": "..."} | {"toolUse": {"name", "toolUseId", "input"}}, ...],
//     "appData": {...}                                              (stored in the snapshot taken after the turn)
//   }
//   reply: {"snapshot": <agent.takeSnapshot({preset: "session"}) after the turn>,
//           "messages": <agent.messages as JSON>, "text": <the turn's final text>,
//           "stopReason": ..., "interrupts": [<the turn's unanswered interrupts>],
//           "modelCalls": [<the messages the model saw on each call>], "approvals": [<approve's answers>]}
import { Agent, FunctionTool, Model } from '@strands-agents/sdk';

/** A model that answers each call with the next scripted response (text, or one tool use). */
class ScriptedModel extends Model {
  constructor(responses) {
    super();
    this.responses = [...responses];
    this.calls = [];
    this.config = { modelId: 'scripted' };
  }

  updateConfig(config) {
    this.config = { ...this.config, ...config };
  }

  getConfig() {
    return this.config;
  }

  async *stream(messages) {
    this.calls.push(messages.map((message) => message.toJSON()));
    const response = this.responses.shift();
    if (response === undefined) {
      throw new Error(`scripted model: no response left for call ${this.calls.length}`);
    }
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    if (response.toolUse !== undefined) {
      const { name, toolUseId, input } = response.toolUse;
      yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name, toolUseId } };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify(input) } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
    } else {
      yield { type: 'modelContentBlockStartEvent' };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: response.text } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
    }
    yield { type: 'modelMetadataEvent', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } };
  }
}

/** The one tool the scripted conversations call: adds two numbers. */
const add = new FunctionTool({
  name: 'add',
  description: 'Add two numbers.',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  callback: (input) => ({ sum: input.a + input.b }),
});

/** A tool that asks a human first (a TypeScript interrupt), then reports the answer. */
const approvals = [];
const approve = new FunctionTool({
  name: 'approve',
  description: 'Ask a human to approve an amount.',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  callback: (input, context) => {
    const answer = context.interrupt({ name: 'approval', reason: { amount: input.amount } });
    approvals.push(answer);
    return { approved: answer === 'yes', amount: input.amount };
  },
});

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const request = await readStdin();
const model = new ScriptedModel(request.responses ?? []);
const agent = new Agent({
  model,
  tools: [add, approve],
  printer: false,
  ...(request.systemPrompt !== undefined && { systemPrompt: request.systemPrompt }),
  ...(request.state !== undefined && { appState: request.state }),
  ...(request.modelState !== undefined && { modelState: request.modelState }),
  ...(request.messages !== undefined && { messages: request.messages }),
});
if (request.snapshot !== undefined) {
  agent.loadSnapshot(request.snapshot);
}
const result = await agent.invoke(request.prompt);
const snapshot = agent.takeSnapshot({ preset: 'session', appData: request.appData ?? {} });
process.stdout.write(
  JSON.stringify({
    snapshot,
    messages: agent.messages.map((message) => message.toJSON()),
    text: result.toString(),
    stopReason: result.stopReason,
    interrupts: (result.interrupts ?? []).map((interrupt) => interrupt.toJSON()),
    modelCalls: model.calls,
    approvals,
  }),
);
