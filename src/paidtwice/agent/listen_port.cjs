// Loaded into every Node process of a `paidtwice sweep --cmd` command (NODE_OPTIONS=--require this file).
//
// Restate's TypeScript examples serve on a fixed port (`restate.serve({ ..., port: 9080 })`), while each run
// of the sweep needs a port of its own. The first HTTP/2 server the process listens with on a fixed TCP port
// (what the Restate SDK's serve starts) listens on the port the lab leased instead
// ($PAIDTWICE_LISTEN_PORT), so the example is swept unedited and two runs never collide. A listen on that
// port already, on port 0, on a path or a handle, and every other server are left as asked.
"use strict";
const net = require("node:net");
const http2 = require("node:http2");

const MOVED = "paidtwice: moved the";
const leased = Number(process.env.PAIDTWICE_LISTEN_PORT);
if (Number.isInteger(leased) && leased > 0) {
  const Http2Server = Object.getPrototypeOf(http2.createServer()).constructor;
  const listen = net.Server.prototype.listen;
  let moved = false;

  // The port a listen call asks for, and how to ask for the leased one instead; null when it names none.
  function portOf(args) {
    const first = args[0];
    if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
      return { port: Number(first), swap: (port) => [port, ...args.slice(1)] };
    }
    if (first !== null && typeof first === "object" && !Array.isArray(first) && first.port !== undefined) {
      return { port: Number(first.port), swap: (port) => [{ ...first, port }, ...args.slice(1)] };
    }
    return null;
  }

  net.Server.prototype.listen = function (...args) {
    const asked = moved || !(this instanceof Http2Server) ? null : portOf(args);
    if (asked !== null && asked.port > 0 && asked.port !== leased) {
      moved = true;
      process.stderr.write(
        `${MOVED} server of port ${asked.port} to port ${leased}, this run's own\n`,
      );
      return listen.apply(this, asked.swap(leased));
    }
    if (asked !== null) moved = true;
    return listen.apply(this, args);
  };
}
