/**
 * `npm run synth`: writes the CloudFormation templates to `infra/cdk.out/` offline, with no AWS
 * account (an environment-agnostic stack). Context comes from `CDK_CONTEXT_JSON` or `-c key=value`
 * arguments, e.g. `npm run synth -- -c certificateArn=arn:... -c replicas=3`.
 */
import { App } from "aws-cdk-lib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ClusterCodeStack } from "../lib/clustercode-stack.js";

/** `-c key=value` pairs of argv. */
function contextArguments(argv: string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (let at = 0; at < argv.length; at++) {
    if (argv[at] !== "-c" && argv[at] !== "--context") continue;
    const [key, ...value] = (argv[++at] ?? "").split("=");
    if (key !== undefined && key !== "") context[key] = value.join("=");
  }
  return context;
}

// Compiled to infra/cdk.out/.app/bin/: the output directory is infra/cdk.out.
const infra = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const app = new App({
  outdir: join(infra, "cdk.out"),
  context: contextArguments(process.argv.slice(2)),
});
new ClusterCodeStack(app, "ClusterCode", {
  description: "ClusterCode Workflows: store, DevBox cluster, app service",
});
const assembly = app.synth();
for (const stack of assembly.stacks) process.stdout.write(`${stack.templateFullPath}\n`);
