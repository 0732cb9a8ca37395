// `npm run build`'s last step: the editor's browser bundle into dist/editor/.
import { bundleEditor } from "./bundle-editor.js";

process.stdout.write(`wrote ${await bundleEditor()}\n`);
