// Restate's TypeScript agent template, in the shapes a sweep must tell apart: the loop asks the model, runs
// the tool it chose as a journaled step that calls no model (`get weather CITY`), and asks again. The model
// call is in `ctx.run` in the journaled handlers, plain in the naive ones; made with the openai client, with
// plain `fetch`, with the Vercel AI SDK (`generateText`, @ai-sdk/openai's default Responses API: the template
// as Restate ships it) or with the anthropic client. And workflow-parallel: three journaled calls at once,
// then a fourth that combines them.
//
// Runs on Node 22.18+ as it is. PORT: the port to listen on; OPENAI_BASE_URL, ANTHROPIC_BASE_URL: the model.
import * as restate from "@restatedev/restate-sdk";
import Anthropic from "@anthropic-ai/sdk";
import { openai as aiOpenai } from "@ai-sdk/openai";
import { generateText, tool, type ModelMessage } from "ai";
import OpenAI from "openai";
import { z } from "zod";

const openai = new OpenAI({ maxRetries: 0 });
const baseUrl = process.env.OPENAI_BASE_URL ?? "http://127.0.0.1:8000/v1";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ToolCall = { toolName: string; toolCallId: string; input: { city: string } };
type Result = { text: string; toolCalls: ToolCall[]; finishReason: string; message: Message };

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "getWeather",
      description: "Get current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

function resultOf(message: OpenAI.Chat.Completions.ChatCompletionMessage, finish: string): Result {
  const calls = (message.tool_calls ?? []).flatMap((c) => (c.type === "function" ? [c] : []));
  return {
    text: message.content ?? "",
    toolCalls: calls.map((c) => ({ toolName: c.function.name, toolCallId: c.id, input: JSON.parse(c.function.arguments) })),
    finishReason: finish === "tool_calls" ? "tool-calls" : "stop",
    message: { role: "assistant", content: message.content, tool_calls: message.tool_calls },
  };
}

async function callWithClient(messages: Message[]): Promise<Result> {
  const completion = await openai.chat.completions.create({ model: "gpt-4o", messages, tools });
  return resultOf(completion.choices[0].message, completion.choices[0].finish_reason);
}

async function callWithFetch(messages: Message[]): Promise<Result> {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ""}` },
    body: JSON.stringify({ model: "gpt-4o", messages, tools }),
  });
  if (!response.ok) throw new Error(`the model answered ${response.status}`);
  const completion = (await response.json()) as OpenAI.Chat.Completions.ChatCompletion;
  return resultOf(completion.choices[0].message, completion.choices[0].finish_reason);
}

async function getWeather(ctx: restate.Context, city: string) {
  return ctx.run(`get weather ${city}`, () => ({ city, temperature: 23, description: "Sunny" }));
}

function agentLoop(call: (messages: Message[]) => Promise<Result>, journaled: boolean) {
  return async (ctx: restate.Context, { message }: { message: string }): Promise<string> => {
    const messages: Message[] = [
      { role: "system", content: "You are a helpful weather assistant." },
      { role: "user", content: `TEMPLATE ${message}` },
    ];
    for (;;) {
      const result = journaled
        ? await ctx.run("LLM call", () => call(messages), { maxRetryAttempts: 3 })
        : await call(messages); // the naive copy: the model call outside the journal
      messages.push(result.message);
      if (result.finishReason !== "tool-calls") return result.text;
      for (const { toolCallId, input } of result.toolCalls) {
        const output = await getWeather(ctx, input.city);
        messages.push({ role: "tool", tool_call_id: toolCallId, content: JSON.stringify(output) });
      }
    }
  };
}

// The template as Restate ships it: the Vercel AI SDK, its messages and tool results.
const aiTools = {
  getWeather: tool({
    description: "Get current weather for a city",
    inputSchema: z.object({ city: z.string().describe("The city to get weather for") }),
  }),
};

async function callLLM(prompt: ModelMessage[]) {
  const response = await generateText({ model: aiOpenai("gpt-4o"), prompt, tools: aiTools, maxRetries: 0 });
  return {
    text: response.text,
    toolCalls: response.toolCalls.map((c) => ({ toolName: c.toolName, toolCallId: c.toolCallId, input: c.input as { city: string } })),
    finishReason: response.finishReason,
    messages: response.response.messages,
  };
}

function aiLoop(journaled: boolean) {
  return async (ctx: restate.Context, { message }: { message: string }): Promise<string> => {
    const messages: ModelMessage[] = [
      { role: "system", content: "You are a helpful weather assistant." },
      { role: "user", content: `TEMPLATE ${message}` },
    ];
    for (;;) {
      const result = journaled
        ? await ctx.run("LLM call", async () => await callLLM(messages), { maxRetryAttempts: 3 })
        : await callLLM(messages); // the naive copy
      messages.push(...result.messages);
      if (result.finishReason !== "tool-calls") return result.text;
      for (const { toolName, toolCallId, input } of result.toolCalls) {
        const output = await getWeather(ctx, input.city);
        messages.push({
          role: "tool",
          content: [{ type: "tool-result", toolName, toolCallId, output: { type: "json", value: output } }],
        });
      }
    }
  };
}

// The same loop with the anthropic client.
const anthropic = new Anthropic({ maxRetries: 0 });

function anthropicLoop(journaled: boolean) {
  const call = async (messages: Anthropic.MessageParam[]) =>
    anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      system: "You are a helpful weather assistant.",
      messages,
      tools: [{ name: "getWeather", description: "Get current weather for a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
    });
  return async (ctx: restate.Context, { message }: { message: string }): Promise<string> => {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `TEMPLATE ${message}` }];
    for (;;) {
      const reply = journaled ? await ctx.run("LLM call", () => call(messages), { maxRetryAttempts: 3 }) : await call(messages);
      messages.push({ role: "assistant", content: reply.content });
      const uses = reply.content.flatMap((b) => (b.type === "tool_use" ? [b] : []));
      if (reply.stop_reason !== "tool_use") return reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const use of uses) {
        const output = await getWeather(ctx, (use.input as { city: string }).city);
        results.push({ type: "tool_result", tool_use_id: use.id, content: JSON.stringify(output) });
      }
      messages.push({ role: "user", content: results });
    }
  };
}

async function ask(prompt: string): Promise<string> {
  const completion = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: prompt }] });
  return completion.choices[0].message.content ?? "";
}

async function workflowParallel(ctx: restate.Context, { message }: { message: string }): Promise<string> {
  const views = ["one", "two", "three"].map((n) => ctx.run(`view ${n}`, () => ask(`VIEW ${n}: ${message}`), { maxRetryAttempts: 3 }));
  await restate.RestatePromise.all(views);
  const texts = await Promise.all(views);
  return ctx.run("combine", () => ask(`COMBINE: ${texts.join(" | ")}`));
}

const shapes = restate.service({
  name: "TsShapes",
  handlers: {
    template: agentLoop(callWithClient, true),
    template_naive: agentLoop(callWithClient, false),
    template_fetch: agentLoop(callWithFetch, true),
    template_fetch_naive: agentLoop(callWithFetch, false),
    template_ai: aiLoop(true),
    template_ai_naive: aiLoop(false),
    template_anthropic: anthropicLoop(true),
    template_anthropic_naive: anthropicLoop(false),
    workflow_parallel: workflowParallel,
  },
  options: {
    retryPolicy: { initialInterval: 200, exponentiationFactor: 2, maxInterval: 2000, maxAttempts: 20, onMaxAttempts: "pause" },
  },
});

restate.serve({ services: [shapes], port: Number(process.env.PORT ?? "9080") });
