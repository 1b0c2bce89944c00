// The conformance corpus: a service with every definition, service and handler option of
// @restatedev/restate-sdk 1.17, and the Context's journaled operations a plain service uses (steps, sleeps,
// calls and sends through typed, descriptor and generic clients, the deterministic rand and date, the request).
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel, retries, traced } from "./llm.ts";

const Question = z.object({ question: z.string().default("Should I take an umbrella in Lisbon today?") });

const archive = restate.service({
  name: "Archive",
  handlers: {
    file: async (ctx: restate.Context, line: string) => ctx.run("write", () => `filed ${line.length}`),
  },
  options: { ingressPrivate: true },
});

async function answer(ctx: restate.Context, { question }: z.infer<typeof Question>): Promise<string> {
  const askedAs = ctx.request().id;
  const reply = await ctx.run("ask", () => askModel(question), {
    serde: restate.serde.json,
    maxRetryAttempts: 5,
    maxRetryDuration: { seconds: 30 },
    initialRetryInterval: { milliseconds: 50 },
    maxRetryInterval: { seconds: 1 },
    retryIntervalFactor: 2,
  });
  const ticket = ctx.rand.uuidv4();
  const draw = Math.floor(ctx.rand.random() * 6) + 1;
  const stamp = await ctx.run(() => `${ticket}:${draw}`);
  const now = await ctx.date.now();
  const stampedAt = await ctx.date.toJSON();
  ctx.console.info(`answered at ${now}`);
  // Long enough for the lab to kill inside the pause on a loaded machine.
  await ctx.sleep({ seconds: 2 }, "settle");
  const filed = await ctx.serviceClient(archive).file(reply, restate.rpc.opts({ idempotencyKey: ticket }));
  ctx.serviceSendClient(archive).file(stamp, restate.rpc.sendOpts({ delay: { milliseconds: 10 } }));
  const again = await ctx.client(archive).file(stampedAt);
  ctx.sendClient(archive).file(askedAs);
  const raw = await ctx.genericCall({
    service: "Archive",
    method: "file",
    parameter: askedAs,
    inputSerde: restate.serde.json,
    outputSerde: restate.serde.json,
  });
  ctx.genericSend({ service: "Archive", method: "file", parameter: String(now), inputSerde: restate.serde.json });
  return `${reply} (${filed}, ${again}, ${raw})`;
}

const desk = restate.service({
  name: "Desk",
  description: "Answers a question and files it.",
  metadata: { team: "conformance" },
  handlers: {
    answer: restate.handlers.handler(
      {
        accept: "application/json",
        input: restate.serde.schema(Question),
        output: restate.serde.json,
        setOutputContentTypeIfEmpty: false,
        description: "Answers one question.",
        metadata: { kind: "agent" },
        idempotencyRetention: { hours: 1 },
        journalRetention: { hours: 1 },
        inactivityTimeout: { seconds: 30 },
        abortTimeout: { seconds: 15 },
        ingressPrivate: false,
        retryPolicy: retries(30),
        asTerminalError: () => undefined,
        serde: restate.serde.json,
        hooks: [traced],
        explicitCancellation: false,
        onJournalMismatchErrors: "retry",
      },
      answer,
    ),
  },
  options: {
    idempotencyRetention: { hours: 2 },
    journalRetention: { hours: 6 },
    inactivityTimeout: { seconds: 45 },
    abortTimeout: { seconds: 20 },
    ingressPrivate: false,
    retryPolicy: retries(40),
    asTerminalError: () => undefined,
    serde: restate.serde.json,
    hooks: [traced],
    explicitCancellation: false,
    onJournalMismatchErrors: "retry",
  },
});

restate.serve({ services: [desk, archive], port: 9080 });
