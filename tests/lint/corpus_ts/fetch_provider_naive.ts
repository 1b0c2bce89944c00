// Plain fetch to the provider's API, naive: in the handler, outside ctx.run.
import * as restate from "@restatedev/restate-sdk";

export default restate.service({
  name: "Completer",
  handlers: {
    complete: async (ctx: restate.Context, prompt: string) => {
      const response = await fetch("https://api.openai.com/v1/chat/completions", { // expect: PT001
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }] }),
      });
      return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content;
    },
  },
});
