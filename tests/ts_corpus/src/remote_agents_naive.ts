// The naive copy of remote_agents.ts: its model calls are outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { tool } from "ai";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Question = z.object({ message: z.string().default("I was charged twice for my plan this month.") });

const specialists = {
  Billing: "You handle invoices, charges and refunds.",
  Security: "You handle logins, passwords and two-factor authentication.",
} as const;
type Specialist = keyof typeof specialists;

const routes = Object.fromEntries(
  Object.keys(specialists).map((name) => [name, tool({ description: `Hand over to ${name}`, inputSchema: z.object({}) })]),
);

function specialist(name: Specialist) {
  return restate.service({
    name,
    handlers: {
      reply: async (ctx: restate.Context, question: string): Promise<string> => {
        const { text } = await askModel([{ role: "system", content: specialists[name] }, { role: "user", content: question }]); // not journaled: paid again on every replay (expect: PT001)
        return text;
      },
    },
  });
}

async function route(ctx: restate.Context, { message }: z.infer<typeof Question>): Promise<string> {
  const choice = await askModel(message, routes); // not journaled: paid again on every replay (expect: PT001)
  const picked = choice.toolCalls[0]?.toolName as Specialist | undefined;
  if (!picked || !(picked in specialists)) return choice.text;
  return ctx.genericCall<string, string>({
    service: picked,
    method: "reply",
    parameter: message,
    inputSerde: restate.serde.json,
    outputSerde: restate.serde.json,
  });
}

const router = restate.service({
  name: "Router",
  handlers: { route: restate.createServiceHandler({ input: restate.serde.schema(Question) }, route) },
});

restate.serve({ services: [router, specialist("Billing"), specialist("Security")], port: 9080 });
