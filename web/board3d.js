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
//
// The picture is framed, not just filmed: at any angle the whole board
// fills the canvas at zoom 1 (the canvas as tall as the board needs at
// its width), zooming in magnifies the part under the pointer, and a pit
// or label whose place falls outside the canvas or under the view buttons
// is hidden, so nothing floats over the page or can be pressed there.

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
const BOARD_LENGTH = 17.4;
const BOARD_DEPTH = 6.4;
const VIEWS = { oblique: 0.95, above: 0.02 };
// Turned further, the board stands on end in the picture and its pits
// get too small to press.
const AZIMUTH_MAX = 0.8;
// Flatter than this the board is a thin strip with the far row hidden
// behind the near one's stones.
const POLAR_MAX = 1.15;
const ZOOM_MAX = 2.2;
// The camera's distance sets only how strong the perspective is; how big
// the board is drawn is set by the frustum (see `frameCamera`).
const DISTANCE = 18;
// Room between the board and the canvas's edges for a pit's rings and
// focus outline, in CSS pixels.
const MARGIN = 10;
const RING = 8;
// What must stay in the picture: the slab's corners, and those of the
// room over the hollows that stones stacked in them take up.
const BOARD_CORNERS = [];
for (const [x, bottom, top, z] of [[BOARD_LENGTH / 2, -0.85, -0.05, BOARD_DEPTH / 2], [8.2, 0, 0.7, 2.1]]) {
  for (const sx of [-x, x]) {
    for (const y of [bottom, top]) {
      for (const sz of [-z, z]) BOARD_CORNERS.push(new THREE.Vector3(sx, y, sz));
    }
  }
}
const HOP_MS = 110;
const STONE_COLOURS = [0xe9dcc4, 0xcfd9d4, 0xe8c8a8, 0xd8d1e6, 0xf0e2b8, 0xc9dbe8].map((c) => new THREE.Color(c));

// Zoom 1 is the whole board; there is nothing to see further out.
function clampZoom(zoom) {
  return Math.min(ZOOM_MAX, Math.max(1, zoom));
}

function clamp(value, limit) {
  return Math.max(-limit, Math.min(limit, value));
}

// The camera on a sphere round the board's centre. Its up is the far side
// of the board, not the sky, so the view turns smoothly down to straight
// above.
function aim(camera, azimuth, polar) {
  camera.position.set(
    DISTANCE * Math.sin(polar) * Math.sin(azimuth),
    DISTANCE * Math.cos(polar),
    DISTANCE * Math.sin(polar) * Math.cos(azimuth),
  );
  camera.up.set(-Math.sin(azimuth), 0, -Math.cos(azimuth));
  camera.lookAt(0, 0, 0);
  camera.updateMatrixWorld();
}

// The board's box as the aimed camera sees it, in tangents of the angle
// off its axis (what a frustum's bounds are measured in at distance 1).
function extent(camera) {
  const box = { left: Infinity, right: -Infinity, bottom: Infinity, top: -Infinity };
  const p = new THREE.Vector3();
  for (const corner of BOARD_CORNERS) {
    p.copy(corner).applyMatrix4(camera.matrixWorldInverse);
    const u = p.x / -p.z;
    const v = p.y / -p.z;
    box.left = Math.min(box.left, u);
    box.right = Math.max(box.right, u);
    box.bottom = Math.min(box.bottom, v);
    box.top = Math.max(box.top, v);
  }
  return box;
}

function overlaps(a, b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
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
  // Its projection is set by `frameCamera`, never by updateProjectionMatrix.
  const camera = new THREE.PerspectiveCamera(38, 2, 0.1, 200);
  scene.add(new THREE.HemisphereLight(0xfff6e8, 0x3b2412, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(-6, 14, 8);
  scene.add(sun);

  const wood = new THREE.MeshStandardMaterial({ color: 0xa8693a, roughness: 0.7 });
  const hollow = new THREE.MeshStandardMaterial({ color: 0x4a2a14, roughness: 0.9 });
  const slab = new THREE.Mesh(new THREE.BoxGeometry(BOARD_LENGTH, 0.8, BOARD_DEPTH), wood);
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

  // `zoom` 1 shows the whole board; `pan` (in the frustum's tangents) is
  // where a zoomed picture has moved off the board's centre. `chosen` is
  // the last view picked by its button: the canvas is shaped for it.
  const orbit = { azimuth: 0, polar: VIEWS.oblique, zoom: 1, pan: { u: 0, v: 0 } };
  let chosen = 'oblique';
  let framing = null; // how the last picture was framed, for zooming at a point
  let shown = null; // the last view drawn: bottom, variant, counts
  let animation = null;
  let frame = 0;

  // A view's button starts that view afresh: straight on, the whole board.
  function setView(view) {
    orbit.polar = VIEWS[view];
    orbit.azimuth = 0;
    orbit.pan = { u: 0, v: 0 };
    chosen = view;
    wrap.dataset.view = view;
    setZoom(1);
  }

  // Zooms keeping the point of the board under (x, y) of the canvas where
  // it is (the middle of the picture when no point is given).
  function setZoom(zoom, x, y) {
    const next = clampZoom(zoom);
    if (framing && x !== undefined) {
      const shrink = framing.fit / orbit.zoom - framing.fit / next;
      orbit.pan.u += (x - framing.x) * shrink;
      orbit.pan.v -= (y - framing.y) * shrink;
    }
    orbit.zoom = next;
    wrap.dataset.zoom = next.toFixed(2);
    requestDraw();
  }

  // Where the board is drawn: the canvas less its margins and the strip
  // the view buttons sit in, so at zoom 1 they never cover a pit (a far
  // pit's button, at least 24 px high, and its ring reach above the
  // board's far edge when the view is low).
  function pictureArea(width, height) {
    const top = Math.max(MARGIN, toolbar.offsetTop + toolbar.offsetHeight + RING + 4);
    return { left: MARGIN, top, width: Math.max(1, width - 2 * MARGIN), height: Math.max(1, height - top - MARGIN) };
  }

  // The canvas's height at `width`: the board's own shape in the chosen
  // view, so there are no empty bands above and below it. Turning the
  // view by hand keeps the height (the page does not jump while dragging).
  function heightFor(width) {
    aim(camera, 0, VIEWS[chosen]);
    const box = extent(camera);
    const area = pictureArea(width, 0);
    return Math.round(area.top + MARGIN + area.width * ((box.top - box.bottom) / (box.right - box.left)));
  }

  // Aims the camera and sets its frustum so the board's box fills the
  // picture area at zoom 1; zoomed in, the area shows part of the box,
  // moved by `pan` but never off the board.
  function frameCamera(width, height) {
    aim(camera, orbit.azimuth, orbit.polar);
    const box = extent(camera);
    const area = pictureArea(width, height);
    const fit = Math.max((box.right - box.left) / area.width, (box.top - box.bottom) / area.height);
    const scale = fit / orbit.zoom;
    orbit.pan.u = clamp(orbit.pan.u, Math.max(0, (box.right - box.left - area.width * scale) / 2));
    orbit.pan.v = clamp(orbit.pan.v, Math.max(0, (box.top - box.bottom - area.height * scale) / 2));
    const u = (box.left + box.right) / 2 + orbit.pan.u;
    const v = (box.bottom + box.top) / 2 + orbit.pan.v;
    const x = area.left + area.width / 2;
    const y = area.top + area.height / 2;
    const near = camera.near;
    camera.projectionMatrix.makePerspective(
      (u - x * scale) * near, (u + (width - x) * scale) * near,
      (v + y * scale) * near, (v - (height - y) * scale) * near, near, camera.far,
    );
    camera.projectionMatrixInverse.copy(camera.projectionMatrix).invert();
    framing = { fit, x, y };
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

  // Lays the flat board's buttons over the hollows as the camera sees them,
  // hiding any that would stick out of the canvas (with its ring) or lie
  // under the view buttons: hidden, they take no press either.
  function placeButtons(width, height) {
    const bottom = shown?.bottom ?? 0;
    const project = (v) => {
      const p = v.clone().project(camera);
      return [(p.x + 1) / 2 * width, (1 - p.y) / 2 * height, p.z];
    };
    const bar = {
      left: toolbar.offsetLeft, top: toolbar.offsetTop,
      right: toolbar.offsetLeft + toolbar.offsetWidth, bottom: toolbar.offsetTop + toolbar.offsetHeight,
    };
    const fits = (box) => box.left >= 0 && box.top >= 0 && box.right <= width && box.bottom <= height && !overlaps(box, bar);
    for (const seat of [0, 1]) {
      for (let pit = 0; pit <= 6; pit += 1) {
        const el = pit === 0 ? board.stores[seat] : board.pits[seat][pit - 1];
        const { centre } = containerAt(bottom, seat, pit);
        const [x, y, depth] = project(centre);
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
        const ring = pit === 0 ? 0 : RING;
        const box = { left: x - w / 2 - ring, right: x + w / 2 + ring, top: y - hgt / 2 - ring, bottom: y + hgt / 2 + ring };
        const behind = depth < -1 || depth > 1;
        el.classList.toggle('off-picture', behind || !fits(box));
        if (pit === 0) placeStoreLabel(el, seat, bottom, project, box, fits);
      }
    }
  }

  // A store's label lies on the wood past the store's near end, on one
  // line: centred there when it fits the board's end beside the last pit;
  // a longer one (a narrow phone, a player's name) starts at the board's
  // end and runs along the near edge towards the middle, below the near
  // row, as far as it needs (each store has its half of the edge). Only
  // past that half is it set smaller, and only past the smallest size cut
  // short (the store's aria-label keeps it whole). It is placed in the
  // store's own box, whose corner is at `storeBox`'s (less no ring).
  const naturalWidths = new WeakMap();
  function naturalWidth(label) {
    // The page's width too: the small-screen styles change the letters
    // (capitals or not).
    const key = `${document.documentElement.lang}|${innerWidth}|${label.textContent}`;
    const known = naturalWidths.get(label);
    if (known?.key === key) return known.measure;
    label.style.fontSize = '';
    label.style.width = 'max-content';
    const width = label.getBoundingClientRect().width;
    const fontPx = parseFloat(getComputedStyle(label).fontSize) || 10;
    const measure = { width, fontPx };
    naturalWidths.set(label, { key, measure });
    return measure;
  }

  function placeStoreLabel(store, seat, bottom, project, storeBox, fits) {
    const label = store.querySelector('.store-label');
    const side = seat === bottom ? 1 : -1;
    const z = (PIT_RADIUS * 3.2 + BOARD_DEPTH / 2) / 2;
    const [inner] = project(new THREE.Vector3(side * (2.5 * PIT_SPACING + PIT_RADIUS), 0, z));
    const [outer, outerY] = project(new THREE.Vector3(side * BOARD_LENGTH / 2, 0, z));
    const [middle, middleY] = project(new THREE.Vector3(side * PIT_SPACING / 4, 0, z));
    let [x, y] = project(new THREE.Vector3(side * STORE_X, 0, z));
    const room = Math.max(24, Math.abs(outer - inner) * 0.9); // clear of the board's edge
    const natural = naturalWidth(label);
    let width = room;
    let fontPx = natural.fontPx;
    if (natural.width > room) {
      // Into the board on screen, from its end (as far from the edge as a
      // centred label would be).
      const toward = Math.sign(middle - outer) || -side;
      const edge = outer + toward * (Math.abs(outer - inner) * 0.05);
      const most = Math.max(room, Math.abs(middle - edge));
      const smallest = Math.min(fontPx, 8);
      if (natural.width > most) fontPx = Math.max(smallest, (fontPx * most) / natural.width);
      width = Math.min(most, Math.ceil((natural.width * fontPx) / natural.fontPx) + 1);
      x = edge + (toward * width) / 2;
      // Along the edge as drawn (it slants when the view is turned).
      const along = middle === outer ? 0 : (x - outer) / (middle - outer);
      y = outerY + along * (middleY - outerY);
    }
    label.style.fontSize = fontPx === natural.fontPx ? '' : `${fontPx}px`;
    const height = label.offsetHeight;
    label.style.width = `${width}px`;
    label.style.left = `${x - storeBox.left}px`;
    label.style.top = `${y - storeBox.top}px`;
    const box = { left: x - width / 2, right: x + width / 2, top: y - height / 2, bottom: y + height / 2 };
    label.classList.toggle('off-picture', !fits(box));
  }

  function draw(now) {
    frame = 0;
    const width = wrap.clientWidth;
    if (width === 0) return;
    // Sized here rather than in the ResizeObserver, which would see its
    // own change as a loop.
    const wanted = heightFor(width);
    if (Math.abs(wrap.clientHeight - wanted) > 0.5) wrap.style.height = `${wanted}px`;
    const height = wrap.clientHeight;
    if (height === 0) return;
    if (canvas.width !== Math.round(width * renderer.getPixelRatio()) || canvas.height !== Math.round(height * renderer.getPixelRatio())) {
      renderer.setSize(width, height, false);
    }
    frameCamera(width, height);
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
      const rect = canvas.getBoundingClientRect();
      setZoom(pinch.zoom * (gap / Math.max(pinch.gap, 1)), (a.x + b.x) / 2 - rect.left, (a.y + b.y) / 2 - rect.top);
      return;
    }
    orbit.azimuth = clamp(orbit.azimuth - (event.clientX - previous.x) * 0.008, AZIMUTH_MAX);
    orbit.polar = Math.max(VIEWS.above, Math.min(POLAR_MAX, orbit.polar - (event.clientY - previous.y) * 0.008));
    wrap.dataset.view = 'custom';
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
    const rect = canvas.getBoundingClientRect();
    setZoom(orbit.zoom * (event.deltaY > 0 ? 1 / 1.08 : 1.08), event.clientX - rect.left, event.clientY - rect.top);
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
