/* The early script: a small classic script right after the page's runtime config (the kernel
 * panel, near the top of the page), run where it stands, so Python's worker starts before the rest
 * of the page is parsed and before the page script (CodeMirror and the rest, `defer`red to the
 * end) runs. (With `async` it often ran after the page script: measured in bench_startup.py.) The page script's
 * KernelClient takes the worker over (`self.earlyKernel`) with the messages it sent meanwhile.
 * On a file:// page it does nothing: the page script says why Python cannot start. */
import { launchWorker } from "./boot.js";

const element = document.getElementById("runtime-config");
if (element && location.protocol !== "file:") {
  try {
    self.earlyKernel = launchWorker(JSON.parse(element.textContent));
  } catch {
    self.earlyKernel = null; // the page script starts the worker itself and reports the error
  }
}
