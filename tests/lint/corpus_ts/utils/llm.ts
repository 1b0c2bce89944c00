// The model call the agents share, as Restate's tour of agents has it in utils/llm.ts: no handler here, so
// nothing to report in this file; a handler that calls llmCall outside ctx.run is reported where it calls it.
import { generateText, type ModelMessage } from "ai";
import { openai } from "@ai-sdk/openai";

const model = openai("gpt-4o-mini");

async function llmCall(prompt: string | Array<ModelMessage>, tools?: Record<string, any>) {
  const response = await generateText({ model, prompt, tools });
  return {
    text: response.text,
    toolCalls: response.toolCalls,
    finishReason: response.finishReason,
    messages: response.response.messages,
  };
}

export default llmCall;
