// Whether this browser can draw WebGL: asked before three.js (large) is
// loaded for the 3D board. Asked once a page load, and the probe's context
// is given back at once (a browser keeps only a few).
let answer;

export function webglAvailable() {
  if (answer === undefined) answer = probe();
  return answer;
}

function probe() {
  try {
    const canvas = document.createElement('canvas');
    const gl = window.WebGLRenderingContext && (canvas.getContext('webgl2') || canvas.getContext('webgl'));
    gl?.getExtension('WEBGL_lose_context')?.loseContext();
    return Boolean(gl);
  } catch {
    return false;
  }
}
