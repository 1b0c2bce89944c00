// The corpus apps' one model call, as tests/ts_corpus makes it: the Vercel AI SDK's generateText on
// @ai-sdk/openai, which reads OPENAI_BASE_URL (paidtwice points it at its stub). Each app journals it in ctx.run.
import { generateText } from "ai";
import { openai } from "@ai-sdk/openai";
import type * as restate from "@restatedev/restate-sdk";

export async function askModel(prompt: string): Promise<string> {
  const result = await generateText({ model: openai("gpt-4o-mini"), prompt });
  return result.text;
}

// Every field of a retry policy, as a user tuning one would set it.
export function retries(maxAttempts: number): restate.RetryPolicy {
  return {
    initialInterval: { milliseconds: 100 },
    exponentiationFactor: 2,
    maxInterval: { seconds: 2 },
    maxAttempts,
    onMaxAttempts: "pause",
  };
}

// A hook provider, as a user's tracing would be: asked for hooks at every attempt, it adds none.
export const traced: restate.HooksProvider = () => ({});
