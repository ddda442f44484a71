// `npm start`: builds what changed (the playground and the packages it needs), bundles alto once per version, then
// runs the playground, all in this one process: a second start with nothing changed spends its time starting the
// chain, not starting Node three times.

import { buildChanged } from "./build-changed.ts"
import { bundleAlto } from "./bundle-alto.ts"

buildChanged(["@walletgate/example-playground"])
await bundleAlto()
await import("../examples/playground/src/main.ts")
