// The conformance corpus: a workflow with every definition, workflow and handler option of
// @restatedev/restate-sdk 1.17, its durable promises (resolved, read, peeked at, rejected) and its state, and a
// service that calls and sends to workflows.
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel, retries, traced } from "./llm.ts";

const Topic = z.object({ topic: z.string().default("A review of the new espresso machine.") });

async function run(ctx: restate.WorkflowContext, { topic }: z.infer<typeof Topic>): Promise<string> {
  const draft = await ctx.run("ask", () => askModel(`Draft a review: ${topic}`));
  ctx.set("draft", draft);
  const drafted = ctx.promise<string>("drafted");
  await drafted.resolve(draft);
  const kept = await drafted.get();
  await ctx.promise<string>("withdrawn").reject("the review was kept");
  // Nobody has commented: a peek reads nothing and waits for nothing.
  await ctx.promise<string>("comments", restate.serde.json).peek();
  return kept;
}

async function status(ctx: restate.WorkflowSharedContext): Promise<string> {
  return (await ctx.get<string>("draft")) ?? "";
}

const review = restate.workflow({
  name: "Review",
  description: "Drafts a review and keeps it.",
  metadata: { team: "conformance" },
  handlers: {
    run: restate.handlers.workflow.workflow(
      {
        accept: "application/json",
        input: restate.serde.schema(Topic),
        output: restate.serde.json,
        setOutputContentTypeIfEmpty: false,
        description: "Drafts the review.",
        metadata: { kind: "agent" },
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
      run,
    ),
    // restate-server refuses idempotencyRetention on a workflow's run (its workflowRetention rules it).
    status: restate.handlers.workflow.shared({ enableLazyState: false, idempotencyRetention: { hours: 1 } }, status),
  },
  options: {
    workflowRetention: { hours: 1 },
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
    enableLazyState: false,
  },
});

// A second workflow the service sends to: it counts the draft it is given.
const recheck = restate.workflow({
  name: "Recheck",
  handlers: {
    run: async (ctx: restate.WorkflowContext, draft: string) => ctx.run("count", () => String(draft.length)),
  },
  options: { ingressPrivate: true },
});

async function start(ctx: restate.Context, { topic }: z.infer<typeof Topic>): Promise<string> {
  const key = ctx.rand.uuidv4();
  const kept = await ctx.workflowClient(review, key).run({ topic });
  ctx.workflowSendClient(recheck, key).run(kept);
  return kept;
}

const reviews = restate.service({
  name: "Reviews",
  handlers: { start: restate.handlers.handler({ input: restate.serde.schema(Topic) }, start) },
});

restate.serve({ services: [review, recheck, reviews], port: 9080 });
