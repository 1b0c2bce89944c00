// The naive copy of racing.ts: its model calls are outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { RestatePromise } from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Question = z.object({ message: z.string().default("How should I index a table read mostly by date?") });
type Q = z.infer<typeof Question>;

async function race(ctx: restate.Context, question: Q): Promise<string> {
  const careful = ctx.serviceClient(racer).careful(question);
  const quick = ctx.serviceClient(racer).quick(question);
  const winner = await RestatePromise.any([
    careful.map((text) => ({ text, loser: quick })),
    quick.map((text) => ({ text, loser: careful })),
  ]);
  ctx.cancel(await winner.loser.invocationId);
  return winner.text ?? "no answer";
}

async function careful(ctx: restate.Context, { message }: Q): Promise<string> {
  const { text } = await askModel(`Think it through: ${message}`); // not journaled: paid again on every replay (expect: PT001)
  return text;
}

async function quick(ctx: restate.Context, { message }: Q): Promise<string> {
  const { text } = await askModel(`In one line: ${message}`); // not journaled: paid again on every replay (expect: PT001)
  return text;
}

const racer = restate.service({
  name: "Racer",
  handlers: {
    race: restate.createServiceHandler({ input: restate.serde.schema(Question) }, race),
    careful,
    quick,
  },
});

restate.serve({ services: [racer], port: 9080 });
