// `npm run bench`: the benchmarks, one at a time so that they never compete for the CPU, each printing its table and
// keeping its figures in `bench/results/<name>.json`; `node bench/run.ts http` runs the ones named. They import the
// built packages (`npm run bench` builds them first). The method: bench/README.md.
const benchmarks = ["http", "chain", "lambda"]
const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !benchmarks.includes(name))
if (unknown.length > 0) throw new Error(`no benchmark named ${unknown.join(", ")} (there are ${benchmarks.join(", ")})`)

const started = performance.now()
for (const name of benchmarks.filter((each) => wanted.length === 0 || wanted.includes(each))) {
  const benchmark = (await import(new URL(`./${name}.ts`, import.meta.url).href)) as { run: () => Promise<void> }
  console.log(`\n## ${name}\n`)
  await benchmark.run()
}
console.log(`\n(${((performance.now() - started) / 1000).toFixed(0)} s)`)
