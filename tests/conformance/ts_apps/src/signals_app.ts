// The conformance corpus: @restatedev/restate-sdk 1.17's Context operations between invocations: awakeables
// and signals resolved and rejected, invocations cancelled and attached to (by id and by reference), and a
// scope taken (calls made through a scope need the server's experimental flow control, which the lab's server
// does not turn on, so the corpus only takes it).
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Question = z.object({ question: z.string().default("Is the relay on time?") });

// Its handlers take an invocation id or run only inside the relay's tree, never called from outside.
const inner = restate.service({
  name: "RelayInner",
  handlers: {
    ping: async (ctx: restate.Context, caller: string) => {
      ctx.invocation(restate.InvocationIdParser.fromString(caller)).signal<string>("ready").resolve("go");
      ctx.invocation(restate.InvocationIdParser.fromString(caller)).signal<string>("refused").reject("not this one");
    },
    echo: async (ctx: restate.Context, text: string) => ctx.run("echo", () => text.toUpperCase()),
  },
  options: { ingressPrivate: true },
});

async function relayQuestion(ctx: restate.Context, { question }: z.infer<typeof Question>): Promise<string> {
  const reply = await ctx.run("ask", () => askModel(question));
  ctx.scope("conformance");

  const yes = ctx.awakeable<string>();
  ctx.resolveAwakeable(yes.id, "yes");
  const no = ctx.awakeable<string>(restate.serde.json);
  ctx.rejectAwakeable(no.id, "no");
  const answers = [await yes.promise.orTimeout({ seconds: 30 }).map((value) => value ?? "")];
  try {
    await no.promise;
  } catch (refused) {
    answers.push((refused as restate.TerminalError).message);
  }

  await ctx.serviceClient(inner).ping(ctx.request().id);
  answers.push(await ctx.signal<string>("ready"));
  try {
    await ctx.signal<string>("refused", restate.serde.json);
  } catch (refused) {
    answers.push((refused as restate.TerminalError).message);
  }

  const later = ctx.serviceSendClient(inner).echo("later", restate.rpc.sendOpts({ delay: { hours: 1 } }));
  ctx.cancel(await later.invocationId);
  const laterStill = ctx.serviceSendClient(inner).echo("later still", restate.rpc.sendOpts({ delay: { hours: 1 } }));
  ctx.invocation(await laterStill.invocationId).cancel();
  const now = ctx.serviceSendClient(inner).echo(reply);
  answers.push(await ctx.attach<string>(await now.invocationId));
  const again = ctx.serviceSendClient(inner).echo("again");
  answers.push(await ctx.invocation(await again.invocationId).attach<string>());
  return answers.join(" / ");
}

const relay = restate.service({
  name: "Relay",
  handlers: { relayQuestion: restate.handlers.handler({ input: restate.serde.schema(Question) }, relayQuestion) },
});

restate.serve({ services: [relay, inner], port: 9080 });
