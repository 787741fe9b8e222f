// The 3D board (WebGL through three.js). It draws the wood, the hollows
// and the stones; the pits and stores a player presses are still the flat
// board's own buttons, laid over the picture where each hollow appears.
// So the counts, the keyboard, the screen reader, two-tap touch and the
// tests work the same in 3D and in 2D, and without WebGL (or when it
// fails) the flat board is simply left as it is.
//
// Drag to turn the view, wheel or pinch to zoom; "Oblique" and "From
// above" at the top right. The player's own row is always the near one.
// A move is shown as its stones travelling pit to pit, unless the visitor
// asked for reduced motion.

import * as THREE from './vendor/three/three.module.min.js';
import { h, setText } from './dom.js';
import { t } from './i18n.js';
import { hasStores, variantOf } from './format.js';

// World units: the board runs along x, the near row is +z.
const PIT_SPACING = 2;
const PIT_RADIUS = 0.78;
const ROW_Z = 1.45;
const STORE_X = 7.3;
const STONE_RADIUS = 0.2;
const MAX_STONES = 160;
const VIEWS = { oblique: 0.95, above: 0.02 };
const HOP_MS = 110;
const STONE_COLOURS = [0xe9dcc4, 0xcfd9d4, 0xe8c8a8, 0xd8d1e6, 0xf0e2b8, 0xc9dbe8].map((c) => new THREE.Color(c));

function clampZoom(zoom) {
  return Math.min(2.2, Math.max(0.6, zoom));
}

function reducedMotion() {
  return window.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
}

// Where a container sits for the current `bottom` seat: pits 1..6 run left
// to right on the near row and right to left on the far one (as the flat
// board), each side's store on its right.
function place(bottom, seat, pit) {
  const near = seat === bottom;
  const z = near ? ROW_Z : -ROW_Z;
  if (pit === 0) return new THREE.Vector3(near ? STORE_X : -STORE_X, 0, 0);
  const column = near ? pit : 7 - pit;
  return new THREE.Vector3((column - 3.5) * PIT_SPACING, 0, z);
}

// Stones in a hollow: rings around the centre, then stacked; the same
// stone always in the same place, so a pit looks the same move to move.
function stoneSpot(index, isStore) {
  const perLayer = isStore ? 24 : 9;
  const layer = Math.floor(index / perLayer);
  const i = index % perLayer;
  if (isStore) {
    const column = i % 3;
    const row = Math.floor(i / 3);
    return new THREE.Vector3((column - 1) * 0.36 + (layer % 2) * 0.12, 0.2 + layer * 0.26, (row - 3.5) * 0.36);
  }
  if (i === 0) return new THREE.Vector3(0, 0.2 + layer * 0.26, 0);
  const angle = (i / 8) * Math.PI * 2 + layer * 0.4;
  return new THREE.Vector3(Math.cos(angle) * 0.42, 0.2 + layer * 0.26, Math.sin(angle) * 0.42);
}

// The order a move sows in, from `seat`'s pit `pit`: round the board
// counter-clockwise, into the mover's store in Kalah (never the other's),
// skipping the emptied pit in Oware.
function sowingPath(variant, seat, pit, stones) {
  const ring = [];
  const other = 1 - seat;
  for (let p = 1; p <= 6; p += 1) ring.push([seat, p]);
  if (hasStores(variant)) ring.push([seat, 0]);
  for (let p = 1; p <= 6; p += 1) ring.push([other, p]);
  const start = pit - 1;
  const path = [];
  let index = start;
  while (path.length < stones && path.length < 72) {
    index = (index + 1) % ring.length;
    const [s, p] = ring[index];
    if (variantOf(variant) === 'oware' && s === seat && p === pit) continue;
    path.push([s, p]);
  }
  return path;
}

export function attach3d(board) {
  const canvas = h('canvas', { class: 'board3d-canvas', 'aria-hidden': 'true' });
  const toolbar = h('div', { class: 'board3d-views', role: 'group' });
  const viewButtons = {};
  for (const view of Object.keys(VIEWS)) {
    viewButtons[view] = h('button', {
      type: 'button', class: 'board3d-view', 'data-testid': `view-${view}`,
      onclick: () => setView(view),
    });
    toolbar.append(viewButtons[view]);
  }
  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ canvas, antialias: true, alpha: true });
  } catch {
    return null; // the flat board stays
  }
  const wrap = h('div', { class: 'board3d', 'data-testid': 'board3d', dataset: { view: 'oblique', zoom: '1.00' } }, canvas, toolbar);
  board.el.replaceWith(wrap);
  wrap.append(board.el);
  board.el.classList.add('is-3d');
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(38, 2, 0.1, 200);
  scene.add(new THREE.HemisphereLight(0xfff6e8, 0x3b2412, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(-6, 14, 8);
  scene.add(sun);

  const wood = new THREE.MeshStandardMaterial({ color: 0xa8693a, roughness: 0.7 });
  const hollow = new THREE.MeshStandardMaterial({ color: 0x4a2a14, roughness: 0.9 });
  const slab = new THREE.Mesh(new THREE.BoxGeometry(17.4, 0.8, 6.4), wood);
  slab.position.y = -0.45;
  scene.add(slab);
  const pitGeometry = new THREE.CylinderGeometry(PIT_RADIUS, PIT_RADIUS * 0.82, 0.12, 40);
  const hollows = [];
  for (let i = 0; i < 14; i += 1) {
    const mesh = new THREE.Mesh(pitGeometry, hollow);
    mesh.position.y = 0.01;
    scene.add(mesh);
    hollows.push(mesh);
  }
  const stones = new THREE.InstancedMesh(new THREE.SphereGeometry(STONE_RADIUS, 14, 10),
    new THREE.MeshStandardMaterial({ roughness: 0.35 }), MAX_STONES);
  stones.count = 0;
  scene.add(stones);
  const flying = new THREE.InstancedMesh(stones.geometry, stones.material, 72);
  flying.count = 0;
  scene.add(flying);

  // The camera on a sphere round the board's centre; `zoom` 1 is as close
  // as the whole board still fits the picture.
  const orbit = { azimuth: 0, polar: VIEWS.oblique, zoom: 1 };
  let shown = null; // the last view drawn: bottom, variant, counts
  let animation = null;
  let frame = 0;

  function setView(view) {
    orbit.polar = VIEWS[view];
    orbit.azimuth = 0;
    wrap.dataset.view = view;
    requestDraw();
  }

  function key(seat, pit) { return seat * 7 + pit; }

  function containerAt(bottom, seat, pit) {
    const mesh = hollows[key(seat, pit)];
    return { mesh, centre: place(bottom, seat, pit) };
  }

  function layoutHollows(bottom, stores) {
    for (const seat of [0, 1]) {
      for (let pit = 0; pit <= 6; pit += 1) {
        const { mesh, centre } = containerAt(bottom, seat, pit);
        mesh.position.set(centre.x, 0.01, centre.z);
        // A store is a long hollow across both rows; with no stores the
        // captured stones lie in a shallower tray at the end.
        if (pit === 0) mesh.scale.set(1.05, 1, stores ? 3.2 : 2.6);
        else mesh.scale.set(1, 1, 1);
      }
    }
  }

  // Every stone where `counts` says, less those still in flight.
  function placeStones(bottom, counts) {
    let n = 0;
    const matrix = new THREE.Matrix4();
    for (const seat of [0, 1]) {
      for (let pit = 0; pit <= 6; pit += 1) {
        const { centre } = containerAt(bottom, seat, pit);
        const count = counts[key(seat, pit)];
        for (let i = 0; i < count && n < MAX_STONES; i += 1) {
          const spot = stoneSpot(i, pit === 0).add(centre);
          matrix.makeTranslation(spot.x, spot.y, spot.z);
          stones.setMatrixAt(n, matrix);
          stones.setColorAt(n, STONE_COLOURS[(i + pit * 3 + seat) % STONE_COLOURS.length]);
          n += 1;
        }
      }
    }
    stones.count = n;
    stones.instanceMatrix.needsUpdate = true;
    if (stones.instanceColor) stones.instanceColor.needsUpdate = true;
  }

  function countsOf(view) {
    const counts = new Array(14).fill(0);
    for (const seat of [0, 1]) {
      for (let pit = 1; pit <= 6; pit += 1) counts[key(seat, pit)] = view.board.pits[seat][pit - 1] ?? 0;
      counts[key(seat, 0)] = view.board.score[seat] ?? 0;
    }
    return counts;
  }

  // Lays the flat board's buttons over the hollows as the camera sees them.
  function placeButtons(width, height) {
    const bottom = shown?.bottom ?? 0;
    const project = (v) => {
      const p = v.clone().project(camera);
      return [(p.x + 1) / 2 * width, (1 - p.y) / 2 * height];
    };
    for (const seat of [0, 1]) {
      for (let pit = 0; pit <= 6; pit += 1) {
        const el = pit === 0 ? board.stores[seat] : board.pits[seat][pit - 1];
        const { centre } = containerAt(bottom, seat, pit);
        const [x, y] = project(centre);
        const reach = pit === 0 ? [PIT_RADIUS * 1.05, PIT_RADIUS * 3.2] : [PIT_RADIUS, PIT_RADIUS];
        const [xr] = project(centre.clone().add(new THREE.Vector3(reach[0], 0, 0)));
        const [, yTop] = project(centre.clone().add(new THREE.Vector3(0, 0, -reach[1])));
        const [, yBottom] = project(centre.clone().add(new THREE.Vector3(0, 0, reach[1])));
        const w = Math.max(24, Math.abs(xr - x) * 2);
        const hgt = Math.max(24, Math.abs(yBottom - yTop));
        el.style.left = `${x}px`;
        el.style.top = `${y}px`;
        el.style.width = `${w}px`;
        el.style.height = `${hgt}px`;
      }
    }
  }

  function draw(now) {
    frame = 0;
    const width = wrap.clientWidth;
    const height = wrap.clientHeight;
    if (width === 0 || height === 0) return;
    if (canvas.width !== Math.round(width * renderer.getPixelRatio()) || canvas.height !== Math.round(height * renderer.getPixelRatio())) {
      renderer.setSize(width, height, false);
    }
    camera.aspect = width / height;
    // Far enough to see the whole board (9 units each side of the centre,
    // 3.6 to the near and far edges) however narrow the screen.
    const half = Math.tan((camera.fov / 2) * Math.PI / 180);
    const distance = Math.max(9.4 / (half * camera.aspect), 3.8 / half) / orbit.zoom;
    camera.position.set(
      distance * Math.sin(orbit.polar) * Math.sin(orbit.azimuth),
      distance * Math.cos(orbit.polar),
      distance * Math.sin(orbit.polar) * Math.cos(orbit.azimuth),
    );
    camera.up.set(0, orbit.polar < 0.1 ? 0 : 1, orbit.polar < 0.1 ? -1 : 0);
    camera.lookAt(0, 0, 0);
    camera.updateProjectionMatrix();
    if (animation) stepAnimation(now);
    renderer.render(scene, camera);
    placeButtons(width, height);
    if (animation) requestDraw();
  }

  function requestDraw() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  // A move's stones leave the pit one by one along the sowing path; each
  // lands before the next sets off. The counts settle to the server's at
  // the end (captures included).
  function startAnimation(view, before, after) {
    const last = view.last;
    const count = before[key(last.seat, last.pit)];
    const path = sowingPath(view.variant, last.seat, last.pit, count);
    if (path.length === 0) return false;
    const counts = before.slice();
    counts[key(last.seat, last.pit)] = 0;
    animation = { view, path, counts, after, started: performance.now(), landed: 0 };
    return true;
  }

  function stepAnimation(now) {
    const { view, path, counts, after } = animation;
    const elapsed = now - animation.started;
    const matrix = new THREE.Matrix4();
    const hops = Math.floor(elapsed / HOP_MS);
    while (animation.landed < Math.min(hops, path.length)) {
      const [seat, pit] = path[animation.landed];
      counts[key(seat, pit)] += 1;
      animation.landed += 1;
    }
    if (animation.landed >= path.length) {
      animation = null;
      flying.count = 0;
      placeStones(view.bottom, after);
      return;
    }
    placeStones(view.bottom, counts);
    // The one stone in the air: from where the last landed to the next.
    const from = animation.landed === 0
      ? place(view.bottom, view.last.seat, view.last.pit)
      : place(view.bottom, ...path[animation.landed - 1]);
    const to = place(view.bottom, ...path[animation.landed]);
    const f = (elapsed % HOP_MS) / HOP_MS;
    const at = from.clone().lerp(to, f);
    at.y = 0.3 + Math.sin(f * Math.PI) * 1.1;
    matrix.makeTranslation(at.x, at.y, at.z);
    flying.setMatrixAt(0, matrix);
    flying.setColorAt(0, STONE_COLOURS[animation.landed % STONE_COLOURS.length]);
    flying.count = 1;
    flying.instanceMatrix.needsUpdate = true;
    if (flying.instanceColor) flying.instanceColor.needsUpdate = true;
  }

  function update(view) {
    for (const [name, button] of Object.entries(viewButtons)) setText(button, t(`view_${name}`));
    toolbar.setAttribute('aria-label', t('view_label'));
    const counts = countsOf(view);
    // One move on from what is drawn, on the same board: animate it.
    const moved = shown && view.last && shown.bottom === view.bottom && shown.variant === variantOf(view.variant)
      && view.ply === shown.ply + 1;
    layoutHollows(view.bottom, hasStores(view.variant));
    const before = shown?.counts;
    shown = { bottom: view.bottom, variant: variantOf(view.variant), counts, ply: view.ply };
    animation = null;
    flying.count = 0;
    if (!(moved && !reducedMotion() && startAnimation(view, before, counts))) placeStones(view.bottom, counts);
    requestDraw();
  }

  // Turning and zooming: drag on the picture (not on a pit), wheel, pinch.
  const pointers = new Map();
  let pinch = null;
  canvas.addEventListener('pointerdown', (event) => {
    canvas.setPointerCapture(event.pointerId);
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { gap: Math.hypot(a.x - b.x, a.y - b.y), zoom: orbit.zoom };
    }
  });
  canvas.addEventListener('pointermove', (event) => {
    const previous = pointers.get(event.pointerId);
    if (!previous) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2 && pinch) {
      const [a, b] = [...pointers.values()];
      const gap = Math.hypot(a.x - b.x, a.y - b.y);
      orbit.zoom = clampZoom(pinch.zoom * (gap / Math.max(pinch.gap, 1)));
      wrap.dataset.zoom = orbit.zoom.toFixed(2);
    } else {
      orbit.azimuth = Math.max(-1.2, Math.min(1.2, orbit.azimuth - (event.clientX - previous.x) * 0.008));
      orbit.polar = Math.max(0.02, Math.min(1.3, orbit.polar - (event.clientY - previous.y) * 0.008));
      wrap.dataset.view = 'custom';
    }
    requestDraw();
  });
  const release = (event) => {
    pointers.delete(event.pointerId);
    if (pointers.size < 2) pinch = null;
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);
  wrap.addEventListener('wheel', (event) => {
    event.preventDefault();
    orbit.zoom = clampZoom(orbit.zoom * (event.deltaY > 0 ? 1 / 1.08 : 1.08));
    wrap.dataset.zoom = orbit.zoom.toFixed(2);
    requestDraw();
  }, { passive: false });
  canvas.addEventListener('webglcontextlost', (event) => event.preventDefault());

  const resizing = new ResizeObserver(() => requestDraw());
  resizing.observe(wrap);

  function dispose() {
    if (frame) cancelAnimationFrame(frame);
    resizing.disconnect();
    renderer.dispose();
    renderer.forceContextLoss();
  }

  return { el: wrap, update, dispose };
}
