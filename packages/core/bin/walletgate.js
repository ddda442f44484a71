#!/usr/bin/env node
// The `walletgate` command. A file of its own, beside the build, so that npm links it into node_modules/.bin at
// install, before anything is built: inside the repository `npx walletgate` then runs this workspace's CLI and
// never looks the name up on the registry.
import("../dist/cli.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/cli.js")) {
    process.stderr.write("walletgate: the CLI is not built yet: run `npm run build` at the repository's root\n")
    process.exit(1)
  }
  throw error
})
