// The conformance corpus: a virtual object with every definition, object and handler option of
// @restatedev/restate-sdk 1.17 (exclusive and shared handlers), its state read, listed, set and cleared, and
// calls and sends to another object.
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel, retries, traced } from "./llm.ts";

const Note = z.object({ note: z.string().default("Remind me to water the plants.") });

const tray = restate.object({
  name: "Tray",
  handlers: {
    add: async (ctx: restate.ObjectContext, line: string) => {
      ctx.set("last", line);
      return ctx.run("count", () => line.length);
    },
    reset: restate.handlers.object.exclusive(async (ctx: restate.ObjectContext) => ctx.clear("last")),
  },
  options: { ingressPrivate: true },
});

async function remember(ctx: restate.ObjectContext, { note }: z.infer<typeof Note>): Promise<string> {
  const reply = await ctx.run("ask", () => askModel(`Summarise for ${ctx.key}: ${note}`));
  const seen = (await ctx.get<number>("seen")) ?? 0;
  ctx.set("seen", seen + 1);
  ctx.set("summary", reply, restate.serde.json);
  ctx.clear("draft");
  const size = await ctx.objectClient(tray, ctx.key).add(reply);
  ctx.objectSendClient(tray, ctx.key).reset();
  const keys = await ctx.stateKeys();
  return `${reply} (${size}; ${keys.sort().join(",")})`;
}

async function recall(ctx: restate.ObjectSharedContext): Promise<string> {
  const keys = await ctx.stateKeys();
  return `${ctx.key}: ${(await ctx.get<string>("summary")) ?? ""} (${keys.length} kept)`;
}

async function forget(ctx: restate.ObjectContext): Promise<string> {
  const kept = await ctx.run("tally", () => "forgotten");
  ctx.clearAll();
  return kept;
}

const notes = restate.object({
  name: "Notes",
  description: "Keeps a summary of each note.",
  metadata: { team: "conformance" },
  handlers: {
    remember: restate.handlers.object.exclusive(
      {
        accept: "application/json",
        input: restate.serde.schema(Note),
        output: restate.serde.json,
        setOutputContentTypeIfEmpty: false,
        description: "Summarises a note and keeps it.",
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
        enableLazyState: true,
      },
      remember,
    ),
    recall: restate.handlers.object.shared({ enableLazyState: false }, recall),
    forget,
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
    enableLazyState: true,
  },
});

restate.serve({ services: [notes, tray], port: 9080 });
