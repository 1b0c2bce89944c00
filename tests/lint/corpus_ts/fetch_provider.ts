// Plain fetch to the provider's API, inside ctx.run.
import * as restate from "@restatedev/restate-sdk";

const baseUrl = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";

async function complete(prompt: string): Promise<string> {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }] }),
  });
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  return body.choices[0].message.content;
}

export default restate.service({
  name: "Completer",
  handlers: {
    complete: async (ctx: restate.Context, prompt: string) => ctx.run("model", () => complete(prompt)),
  },
});
