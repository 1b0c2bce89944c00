// The model call every agent of the corpus makes, as Restate's TypeScript examples make it: the Vercel AI SDK's
// generateText on @ai-sdk/openai, which reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment.
import { generateText, type ModelMessage, type ToolSet } from "ai";
import { openai } from "@ai-sdk/openai";

export type Reply = {
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: unknown }[];
  finishReason: string;
  messages: ModelMessage[];
};

export async function askModel(prompt: string | ModelMessage[], tools?: ToolSet): Promise<Reply> {
  const result = await generateText({ model: openai("gpt-4o-mini"), prompt, tools });
  return {
    text: result.text,
    toolCalls: result.toolCalls.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })),
    finishReason: result.finishReason,
    messages: result.response.messages,
  };
}

export function toolMessage(toolCallId: string, toolName: string, value: unknown): ModelMessage {
  return {
    role: "tool",
    content: [{ type: "tool-result", toolCallId, toolName, output: { type: "json", value: value as never } }],
  };
}
