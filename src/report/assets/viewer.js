/* skinsolve report viewer: plain WebGL2, no framework, no network.
 *
 * Data (written by src/report/report.c into <script id="sks-data">):
 *   mesh: bind positions/normals (f32), 4 (or 8, mesh.influences) palette
 *         indices (u16) and weights (f32) per vertex, triangles (u32);
 *   clip: ground truth y_fj per frame as a residual from one bake's skinned
 *         surface (signed bytes, square-root law, scale per frame);
 *   bake: palette per frame (3 rows of model * inverse bind per joint, f32)
 *         and e_fj in percent of D per vertex per frame (IEEE half floats);
 *         joints: the diagnosis (share of the residual per dominant joint);
 *   mesh.morphs (data version 2): the morph targets the baked clips carry,
 *         per part its shown vertices [first, first + count) and position
 *         deltas (f32, target-major), and per baked clip morph_weights (f32,
 *         mesh.morph_weight_count per frame): the weights the metric played;
 *         the bind positions are morphed on the CPU per frame
 *         (bind + sum_k w_k * delta_k), then skinned on the GPU; the
 *         normals too when the part has normal_deltas (f32, the same
 *         layout, scaled to the page's unit normals);
 *   mesh.rigid_* (data version 3): the rigid parts' vertices follow the
 *         skinned ones, in bind space, each with one influence (weight 1) on
 *         its part's palette entry (model of its node per frame), so they
 *         are skinned like any other vertex;
 *   mesh.dominant: each vertex's dominant joint (i32, -1 none), coloured
 *         with mesh.joint_colors (3 bytes a joint) in "colour by: dominant
 *         joint" instead of the error ramp.
 *
 * Every baked target is skinned in the vertex shader with its palette (4
 * influences, positions and normals), drawn over the ground truth as a dark
 * silhouette, and coloured by e_fj: the numbers the metric summed.
 * Colour ramp, linear in e / D, up to ramp_max_pct (3% of D):
 *   0 blue (26,64,242), 0.25 cyan (0,191,242), 0.5 green (51,217,51),
 *   0.75 yellow (250,217,26), 1 and above red (230,26,26).
 * Keep style.css's .ramp gradient in step with RAMP_GLSL below.
 *
 * For tests and scripting: document.body.dataset.ready = "1" once the first
 * frame is drawn ("no-webgl" / "error" otherwise); #frame-mean-error and
 * #frame-worst-error show the current frame's numbers for the result chosen
 * in "numbers for" (text in %, data-value full precision); window.sksReport
 * has setClip(i | name), setFrame(k), setResult(r), setColorBy("error" | "joint"), play(), pause(),
 * setView(yaw, pitch, zoom), state(), panels() (CSS px inside the canvas)
 * and vertexErrorStats(clip, result); the setters return a promise that
 * resolves once the new frame is on screen. Keys: space play/pause,
 * arrows step, u toggles the up axis (Y / Z). */
(function () {
  "use strict";

  const BACKGROUND = [0.933, 0.945, 0.957];
  const SEPARATOR = [0.78, 0.8, 0.83];
  const GROUND_TRUTH_COLOR = [0.80, 0.76, 0.70];
  const SILHOUETTE_COLOR = [0.16, 0.17, 0.2];

  const RAMP_GLSL = `
vec3 ramp(float t) {
  vec3 c0 = vec3(0.102, 0.251, 0.949);
  vec3 c1 = vec3(0.0, 0.749, 0.949);
  vec3 c2 = vec3(0.2, 0.851, 0.2);
  vec3 c3 = vec3(0.98, 0.851, 0.102);
  vec3 c4 = vec3(0.902, 0.102, 0.102);
  float s = clamp(t, 0.0, 1.0) * 4.0;
  if (s < 1.0) return mix(c0, c1, s);
  if (s < 2.0) return mix(c1, c2, s - 1.0);
  if (s < 3.0) return mix(c2, c3, s - 2.0);
  return mix(c3, c4, s - 3.0);
}`;

  // Linear blend skinning with the palette: sum_i w_i * palette[j_i] (seeds 000, 002).
  // Palette entry j: texels (0..2, j) hold rows 0..2 of model * inverseBind.
  const SKIN_GLSL = `
layout(location = 0) in vec3 aPosition;
layout(location = 2) in uvec4 aJoints;
layout(location = 3) in vec4 aWeights;
uniform highp sampler2D uPalette;
uniform mat4 uViewProj;
mat4 skinMatrix(uint j) {
  int y = int(j);
  vec4 r0 = texelFetch(uPalette, ivec2(0, y), 0);
  vec4 r1 = texelFetch(uPalette, ivec2(1, y), 0);
  vec4 r2 = texelFetch(uPalette, ivec2(2, y), 0);
  return mat4(r0.x, r1.x, r2.x, 0.0, r0.y, r1.y, r2.y, 0.0,
              r0.z, r1.z, r2.z, 0.0, r0.w, r1.w, r2.w, 1.0);
}
#ifdef INFLUENCES8
layout(location = 6) in uvec4 aJoints1;
layout(location = 7) in vec4 aWeights1;
#endif
mat4 skin() {
  mat4 s = aWeights.x * skinMatrix(aJoints.x) + aWeights.y * skinMatrix(aJoints.y) +
           aWeights.z * skinMatrix(aJoints.z) + aWeights.w * skinMatrix(aJoints.w);
#ifdef INFLUENCES8
  s += aWeights1.x * skinMatrix(aJoints1.x) + aWeights1.y * skinMatrix(aJoints1.y) +
       aWeights1.z * skinMatrix(aJoints1.z) + aWeights1.w * skinMatrix(aJoints1.w);
#endif
  return s;
}`;

  // A baked target: skinned positions and normals, coloured by e_fj.
  const SKIN_VS = `#version 300 es
${SKIN_GLSL}
layout(location = 1) in vec3 aNormal;
layout(location = 4) in float aError;
layout(location = 8) in vec3 aJointColor;
out vec3 vNormal;
out float vError;
flat out vec3 vJointColor; // one joint per triangle (provoking vertex), no blends
void main() {
  mat4 s = skin();
  vec3 p = (s * vec4(aPosition, 1.0)).xyz;
  vNormal = mat3(s) * aNormal;
  vError = aError;
  vJointColor = aJointColor;
  gl_Position = uViewProj * vec4(p, 1.0);
}`;

  const SKIN_FS = `#version 300 es
precision highp float;
in vec3 vNormal;
in float vError;
flat in vec3 vJointColor;
uniform float uRampMax;
uniform vec3 uLightDir;
uniform int uColorBy;
out vec4 outColor;
${RAMP_GLSL}
void main() {
  vec3 n = normalize(vNormal);
  float light = 0.5 + 0.5 * abs(dot(n, uLightDir));
  vec3 base = uColorBy == 1 ? vJointColor : ramp(vError / uRampMax);
  outColor = vec4(base * light, 1.0);
}`;

  // The artist's surface y_fj = (base bake's skinned surface) + residual,
  // residual decoded from signed bytes: sign(q) q^2 * scale.
  const GT_VS = `#version 300 es
${SKIN_GLSL}
layout(location = 5) in vec3 aResidual;
uniform float uResidualScale;
out vec3 vWorld;
void main() {
  vec3 p = (skin() * vec4(aPosition, 1.0)).xyz + sign(aResidual) * aResidual * aResidual * uResidualScale;
  vWorld = p;
  gl_Position = uViewProj * vec4(p, 1.0);
}`;

  const GT_FS = `#version 300 es
precision highp float;
in vec3 vWorld;
uniform vec3 uColor;
uniform float uShade;
uniform vec3 uLightDir;
out vec4 outColor;
void main() {
  vec3 n = normalize(cross(dFdx(vWorld), dFdy(vWorld)));
  float light = mix(1.0, 0.45 + 0.55 * abs(dot(n, uLightDir)), uShade);
  outColor = vec4(uColor * light, 1.0);
}`;

  // ---- data ---------------------------------------------------------------

  function decodeBase64(text) {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }

  function halfToFloat(h) {
    const sign = h & 0x8000 ? -1 : 1;
    const e = (h >> 10) & 31;
    const m = h & 1023;
    if (e === 0) return sign * m * 2 ** -24;
    if (e === 31) return m ? NaN : sign * Infinity;
    return sign * (1 + m / 1024) * 2 ** (e - 15);
  }

  const data = JSON.parse(document.getElementById("sks-data").textContent);
  const mesh = data.mesh;
  const V = mesh.vertex_count;
  const P = mesh.palette_size;
  const rampMax = data.ramp_max_pct;
  const decoded = new Map();

  function clipArrays(ci) {
    if (decoded.has(ci)) return decoded.get(ci);
    const c = data.clips[ci];
    const arrays = {
      centers: new Float32Array(decodeBase64(c.frame_centers)),
      residualScale: new Float32Array(decodeBase64(c.gt_residual_scale)),
      residual: new Int8Array(decodeBase64(c.gt_residual)),
      baked: c.baked.map((b) => (b ? {
        palettes: new Float32Array(decodeBase64(b.palettes)),
        error: new Uint16Array(decodeBase64(b.vertex_error)),
        morphWeights: b.morph_weights ? new Float32Array(decodeBase64(b.morph_weights)) : null
      } : null))
    };
    decoded.set(ci, arrays);
    return arrays;
  }

  // ---- state + DOM ---------------------------------------------------------

  const state = {
    clip: 0,
    frame: 0,
    result: 0,
    playing: true,
    time: 0,
    yaw: 0.6,
    pitch: 0.18,
    zoom: 1,
    upAxis: 1,
    colorBy: "error"
  };

  const el = (id) => document.getElementById(id);
  const canvas = el("view-canvas");
  const clipSelect = el("clip-select");
  const resultSelect = el("result-select");
  const slider = el("frame-slider");
  const playButton = el("play-button");
  const counter = el("frame-counter");
  const meanOut = el("frame-mean-error");
  const worstOut = el("frame-worst-error");
  const labels = el("panel-labels");
  const colorSelect = el("color-select");

  data.clips.forEach((c, i) => {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = `${c.name} (${sourceFrames(c)} frames${frameStep(c) > 1 ? `, 1 in ${frameStep(c)} shown` : ""})`;
    clipSelect.appendChild(o);
  });
  data.results.forEach((r, i) => {
    const o = document.createElement("option");
    o.value = String(i);
    o.textContent = r.mode;
    resultSelect.appendChild(o);
  });

  // Percent with at least 4 decimals and 3 significant digits.
  function formatPct(v) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "n/a";
    if (v === 0) return "0.0000 %";
    const decimals = Math.min(12, Math.max(4, 2 - Math.floor(Math.log10(Math.abs(v)))));
    return `${v.toFixed(decimals)} %`;
  }

  function clipData() { return data.clips[state.clip]; }
  // Over the report's size budget the views hold every k-th frame of the
  // clip: view frame f is clip frame f * k (the numbers stay all frames').
  function frameStep(c) { return c.frame_step || 1; }
  function sourceFrames(c) { return c.source_frame_count || c.frame_count; }

  function activeBake() {
    const c = clipData();
    if (c.baked[state.result]) return c.baked[state.result];
    return c.baked.find((b) => b) || null;
  }

  function frameTimeSpan(c) {
    return c.frame_count > 1 ? c.times[c.frame_count - 1] - c.times[0] : 0;
  }

  function updateDom() {
    const c = clipData();
    const f = state.frame;
    const b = activeBake();
    counter.textContent = `frame ${f * frameStep(c) + 1} / ${sourceFrames(c)} \u00b7 t = ${(c.times[f] ?? 0).toFixed(3)} s`;
    counter.dataset.frame = String(f);
    slider.max = String(Math.max(0, c.frame_count - 1));
    slider.value = String(f);
    const mean = b ? b.frame_mean_error_pct[f] : null;
    const worst = b ? b.frame_worst_error_pct[f] : null;
    meanOut.textContent = formatPct(mean);
    meanOut.dataset.value = String(mean);
    meanOut.dataset.frame = String(f);
    worstOut.textContent = formatPct(worst);
    worstOut.dataset.value = String(worst);
    worstOut.dataset.frame = String(f);
    playButton.textContent = state.playing ? "Pause" : "Play";
    document.querySelectorAll(".cursor").forEach((line) => {
      const visible = line.id === `plot-cursor-${state.clip}`;
      const x = Number(line.dataset.x0) + Number(line.dataset.dx) * f * frameStep(c);
      line.setAttribute("x1", String(x));
      line.setAttribute("x2", String(x));
      line.style.display = visible ? "" : "none";
    });
    document.querySelectorAll("table.quality tbody tr").forEach((tr) => {
      tr.classList.toggle("current", Number(tr.dataset.clip) === state.clip);
    });
    document.querySelectorAll("table.joints").forEach((t) => {
      t.classList.toggle("current", Number(t.dataset.clip) === state.clip && Number(t.dataset.result) === state.result);
    });
    colorSelect.value = state.colorBy;
    el("joint-legend").hidden = state.colorBy !== "joint";
    el("error-legend").hidden = state.colorBy === "joint";
    updateLabels();
  }

  // ---- WebGL -----------------------------------------------------------------

  const gl = canvas.getContext("webgl2", { antialias: true, preserveDrawingBuffer: true });

  // 4 influences as in the seeds; 8 when the rig has vertices with more.
  function withInfluences(text) {
    return mesh.influences === 8 ? text.replace("#version 300 es\n", "#version 300 es\n#define INFLUENCES8\n") : text;
  }

  function compile(vsText, fsText) {
    const prog = gl.createProgram();
    [[gl.VERTEX_SHADER, vsText], [gl.FRAGMENT_SHADER, fsText]].forEach(([type, text]) => {
      const sh = gl.createShader(type);
      gl.shaderSource(sh, text);
      gl.compileShader(sh);
      if (!gl.getShaderParameter(sh, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(sh));
      gl.attachShader(prog, sh);
    });
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
    const uniforms = {};
    const n = gl.getProgramParameter(prog, gl.ACTIVE_UNIFORMS);
    for (let i = 0; i < n; i += 1) {
      const info = gl.getActiveUniform(prog, i);
      uniforms[info.name] = gl.getUniformLocation(prog, info.name);
    }
    return { prog, uniforms };
  }

  function staticBuffer(target, bytes) {
    const buf = gl.createBuffer();
    gl.bindBuffer(target, buf);
    gl.bufferData(target, bytes, gl.STATIC_DRAW);
    return buf;
  }

  let glState = null;

  // The carried morph targets: [{first, count, targets, offset, deltas,
  // normalDeltas (null when the file has none)}].
  const morphs = (mesh.morphs || []).map((g) => ({
    first: g.first,
    count: g.count,
    targets: g.targets,
    offset: g.weight_offset,
    deltas: new Float32Array(decodeBase64(g.deltas)),
    normalDeltas: g.normal_deltas ? new Float32Array(decodeBase64(g.normal_deltas)) : null
  }));
  const morphWeightCount = mesh.morph_weight_count || 0;
  const morphsNormals = morphs.some((g) => g.normalDeltas);

  // out = bind + sum_k w_k * delta_k on the morphed parts, with the weights
  // of one frame (null: none played, the bind); which: "deltas" (positions)
  // or "normalDeltas" (normals; the shader normalises).
  function morphAttribute(which, bind, weights, frame, out) {
    morphs.forEach((g) => {
      const n = g.count;
      const d = g[which];
      if (!d) return;
      for (let i = 0; i < 3 * n; i += 1) {
        const o = 3 * g.first + i;
        let p = bind[o];
        for (let k = 0; weights && k < g.targets; k += 1) {
          const w = weights[frame * morphWeightCount + g.offset + k];
          if (w !== 0) p += w * d[k * 3 * n + i];
        }
        out[o] = p;
      }
    });
  }
  function morphPositions(bind, weights, frame, out) { morphAttribute("deltas", bind, weights, frame, out); }
  function morphNormals(bind, weights, frame, out) { morphAttribute("normalDeltas", bind, weights, frame, out); }
  // A mesh attribute (base64) morphed as upload() does (morph: morphPositions
  // or morphNormals) with one bake's weights at a shown frame, for checks.
  function morphedForCheck(morph, base64, clip, result, frame) {
    const a = clipArrays(Number(clip)).baked[Number(result)];
    const bind = new Float32Array(decodeBase64(base64));
    const out = new Float32Array(bind);
    morph(bind, a ? a.morphWeights : null, Number(frame), out);
    return out;
  }

  // Per vertex: the colour of its dominant joint (grey without one).
  function dominantColors() {
    const out = new Uint8Array(Math.max(3, V * 3));
    if (!mesh.dominant) return out;
    const dom = new Int32Array(decodeBase64(mesh.dominant));
    const colors = new Uint8Array(decodeBase64(mesh.joint_colors));
    for (let v = 0; v < V; v += 1) {
      const j = dom[v];
      const ok = j >= 0 && 3 * j + 2 < colors.length;
      for (let k = 0; k < 3; k += 1) out[3 * v + k] = ok ? colors[3 * j + k] : 128;
    }
    return out;
  }

  function initGl() {
    const skin = compile(withInfluences(SKIN_VS), SKIN_FS);
    const ground = compile(withInfluences(GT_VS), GT_FS);
    const bindPositions = new Float32Array(decodeBase64(mesh.positions));
    // With carried morph targets the ground truth and every bake skin their
    // own morphed bind (a buffer each, rewritten per frame); else one.
    const positionBuffer = () => (morphs.length ?
      (() => {
        const b = gl.createBuffer();
        gl.bindBuffer(gl.ARRAY_BUFFER, b);
        gl.bufferData(gl.ARRAY_BUFFER, bindPositions, gl.DYNAMIC_DRAW);
        return b;
      })() : null);
    const positions = staticBuffer(gl.ARRAY_BUFFER, bindPositions);
    const bindNormals = new Float32Array(decodeBase64(mesh.normals));
    const normals = staticBuffer(gl.ARRAY_BUFFER, bindNormals);
    // With normal deltas every bake shades its own morphed normals.
    const normalBuffer = () => {
      if (!morphsNormals) return null;
      const b = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.bufferData(gl.ARRAY_BUFFER, bindNormals, gl.DYNAMIC_DRAW);
      return b;
    };
    const joints = staticBuffer(gl.ARRAY_BUFFER, new Uint16Array(decodeBase64(mesh.joints)));
    const weights = staticBuffer(gl.ARRAY_BUFFER, new Float32Array(decodeBase64(mesh.weights)));
    const indexData = new Uint32Array(decodeBase64(mesh.indices));
    const indices = staticBuffer(gl.ELEMENT_ARRAY_BUFFER, indexData);
    const jointColors = staticBuffer(gl.ARRAY_BUFFER, dominantColors());
    const residualBuffer = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, residualBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, Math.max(4, V * 3), gl.DYNAMIC_DRAW);

    function bindSkinAttributes(pos) {
      gl.bindBuffer(gl.ARRAY_BUFFER, pos || positions);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
      const k = mesh.influences;
      gl.bindBuffer(gl.ARRAY_BUFFER, joints);
      gl.enableVertexAttribArray(2);
      gl.vertexAttribIPointer(2, 4, gl.UNSIGNED_SHORT, 2 * k, 0);
      if (k === 8) {
        gl.enableVertexAttribArray(6);
        gl.vertexAttribIPointer(6, 4, gl.UNSIGNED_SHORT, 16, 8);
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, weights);
      gl.enableVertexAttribArray(3);
      gl.vertexAttribPointer(3, 4, gl.FLOAT, false, 4 * k, 0);
      if (k === 8) {
        gl.enableVertexAttribArray(7);
        gl.vertexAttribPointer(7, 4, gl.FLOAT, false, 32, 16);
      }
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, indices);
    }

    const gtPositions = positionBuffer();
    const gtVao = gl.createVertexArray();
    gl.bindVertexArray(gtVao);
    bindSkinAttributes(gtPositions);
    gl.bindBuffer(gl.ARRAY_BUFFER, residualBuffer);
    gl.enableVertexAttribArray(5);
    gl.vertexAttribPointer(5, 3, gl.BYTE, true, 0, 0);
    gl.bindVertexArray(null);

    const bakes = data.results.map(() => {
      const morphed = positionBuffer();
      const morphedNormals = normalBuffer();
      const vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      bindSkinAttributes(morphed);
      gl.bindBuffer(gl.ARRAY_BUFFER, morphedNormals || normals);
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 0, 0);
      const errorBuffer = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, errorBuffer);
      gl.bufferData(gl.ARRAY_BUFFER, Math.max(4, V * 2), gl.DYNAMIC_DRAW);
      gl.enableVertexAttribArray(4);
      gl.vertexAttribPointer(4, 1, gl.HALF_FLOAT, false, 0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, jointColors);
      gl.enableVertexAttribArray(8);
      gl.vertexAttribPointer(8, 3, gl.UNSIGNED_BYTE, true, 0, 0);
      gl.bindVertexArray(null);
      const palette = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, palette);
      gl.texStorage2D(gl.TEXTURE_2D, 1, gl.RGBA32F, 3, Math.max(1, P));
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      return { vao, errorBuffer, palette, morphed, morphedNormals, hasFrame: false };
    });
    glState = {
      skin, ground, gtVao, gtPositions, residualBuffer, bakes, bindPositions, bindNormals,
      morphScratch: new Float32Array(bindPositions), normalScratch: new Float32Array(bindNormals),
      indexCount: indexData.length, uploaded: ""
    };
  }

  // Per-frame uploads: ground-truth positions, and per bake its palette and errors.
  function upload() {
    const key = `${state.clip}:${state.frame}`;
    if (glState.uploaded === key) return;
    const a = clipArrays(state.clip);
    const f = state.frame;
    gl.bindBuffer(gl.ARRAY_BUFFER, glState.residualBuffer);
    gl.bufferSubData(gl.ARRAY_BUFFER, 0, a.residual.subarray(f * V * 3, (f + 1) * V * 3));
    // Morphed binds: the ground truth with its base bake's weights (its
    // residual is from that bake's surface), each bake with its own.
    const uploadMorphed = (buffer, b) => {
      if (!buffer) return;
      morphPositions(glState.bindPositions, b ? b.morphWeights : null, f, glState.morphScratch);
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, glState.morphScratch);
    };
    uploadMorphed(glState.gtPositions, a.baked[clipData().gt_base]);
    glState.bakes.forEach((g, r) => {
      const b = a.baked[r];
      g.hasFrame = Boolean(b);
      if (!b) return;
      uploadMorphed(g.morphed, b);
      if (g.morphedNormals) {
        morphNormals(glState.bindNormals, b.morphWeights, f, glState.normalScratch);
        gl.bindBuffer(gl.ARRAY_BUFFER, g.morphedNormals);
        gl.bufferSubData(gl.ARRAY_BUFFER, 0, glState.normalScratch);
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, g.errorBuffer);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, b.error.subarray(f * V, (f + 1) * V));
      gl.bindTexture(gl.TEXTURE_2D, g.palette);
      gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, 3, P, gl.RGBA, gl.FLOAT,
        b.palettes.subarray(f * P * 12, (f + 1) * P * 12));
    });
    glState.uploaded = key;
  }

  // ---- camera ---------------------------------------------------------------

  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2);
    const nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }

  function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
  function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
  function normalize(a) {
    const l = Math.hypot(a[0], a[1], a[2]) || 1;
    return [a[0] / l, a[1] / l, a[2] / l];
  }
  function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

  function lookAt(eye, center, up) {
    const z = normalize(sub(eye, center));
    const x = normalize(cross(up, z));
    const y = cross(z, x);
    return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
      -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  }

  function mul(a, b) {
    const o = new Array(16).fill(0);
    for (let c = 0; c < 4; c += 1) {
      for (let r = 0; r < 4; r += 1) {
        let s = 0;
        for (let k = 0; k < 4; k += 1) s += a[k * 4 + r] * b[c * 4 + k];
        o[c * 4 + r] = s;
      }
    }
    return o;
  }

  // Orbit around the ground truth's box centre of the current frame (follows root motion).
  function camera(aspect) {
    const a = clipArrays(state.clip);
    const f = state.frame;
    const center = [a.centers[3 * f], a.centers[3 * f + 1], a.centers[3 * f + 2]];
    // D in scene units: the palettes put the mesh in the scene (an armature
    // scale above the skeleton makes it larger than D, which is in bind units)
    const size = Math.max(data.scene_diagonal || data.diagonal || 1, 1e-6);
    const fov = (35 * Math.PI) / 180;
    const fit = Math.min(aspect, 1);
    const dist = (0.5 * size) / (Math.tan(fov / 2) * fit) * state.zoom;
    const cp = Math.cos(state.pitch);
    const sp = Math.sin(state.pitch);
    const dir = [Math.sin(state.yaw) * cp, sp, Math.cos(state.yaw) * cp];
    // up axis Y (glTF) or Z (many DCC exports): rotate the orbit frame.
    const d = state.upAxis === 1 ? dir : [dir[0], -dir[2], dir[1]];
    const up = state.upAxis === 1 ? [0, 1, 0] : [0, 0, 1];
    const eye = [center[0] + d[0] * dist, center[1] + d[1] * dist, center[2] + d[2] * dist];
    const view = lookAt(eye, center, up);
    const proj = perspective(fov, aspect, dist * 0.01, dist * 10 + size * 10);
    const toEye = normalize(sub(eye, center));
    const light = normalize([toEye[0] + up[0] * 0.6, toEye[1] + up[1] * 0.6, toEye[2] + up[2] * 0.6]);
    return { viewProj: mul(proj, view), light };
  }

  // ---- drawing ----------------------------------------------------------------

  function panelCount() { return 1 + data.results.length; }

  function panelRects() {
    const n = panelCount();
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    const out = [];
    for (let i = 0; i < n; i += 1) {
      const x0 = Math.round((w * i) / n);
      const x1 = Math.round((w * (i + 1)) / n);
      out.push({ x: x0 + (i ? 1 : 0), y: 0, width: x1 - x0 - (i ? 1 : 0), height: h });
    }
    return out;
  }

  function panelTitle(i) {
    if (i === 0) return { title: "Artist ground truth", detail: "source surface at the target's vertices" };
    const r = i - 1;
    const b = clipData().baked[r];
    if (!b) return { title: data.results[r].mode, detail: "clip not baked in this mode" };
    const f = state.frame;
    return {
      title: `Baked: ${data.results[r].mode}`,
      detail: `quality ${b.quality === null ? "n/a (no motion)" : `${(b.quality * 100).toFixed(2)} %`} \u00b7 frame mean ${formatPct(b.frame_mean_error_pct[f])}` +
        ` \u00b7 worst ${formatPct(b.frame_worst_error_pct[f])}`
    };
  }

  function updateLabels() {
    const rects = panelRects();
    while (labels.children.length < rects.length) {
      const d = document.createElement("div");
      d.className = "panel-label";
      labels.appendChild(d);
    }
    rects.forEach((rc, i) => {
      const t = panelTitle(i);
      const d = labels.children[i];
      d.style.left = `${rc.x + 6}px`;
      d.style.maxWidth = `${rc.width - 12}px`;
      d.innerHTML = "";
      const b = document.createElement("b");
      b.textContent = t.title;
      d.appendChild(b);
      d.appendChild(document.createElement("br"));
      d.appendChild(document.createTextNode(t.detail));
    });
  }

  function resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(canvas.clientHeight * dpr));
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    return dpr;
  }

  function drawGround(viewProj, light, color, shade) {
    const g = glState.ground;
    const a = clipArrays(state.clip);
    gl.useProgram(g.prog);
    gl.uniformMatrix4fv(g.uniforms.uViewProj, false, viewProj);
    gl.uniform1f(g.uniforms.uResidualScale, a.residualScale[state.frame]);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, glState.bakes[clipData().gt_base].palette);
    gl.uniform1i(g.uniforms.uPalette, 0);
    gl.uniform3fv(g.uniforms.uColor, color);
    gl.uniform1f(g.uniforms.uShade, shade);
    gl.uniform3fv(g.uniforms.uLightDir, light);
    gl.bindVertexArray(glState.gtVao);
    gl.drawElements(gl.TRIANGLES, glState.indexCount, gl.UNSIGNED_INT, 0);
  }

  function drawBake(r, viewProj, light) {
    const g = glState.bakes[r];
    const s = glState.skin;
    gl.useProgram(s.prog);
    gl.uniformMatrix4fv(s.uniforms.uViewProj, false, viewProj);
    gl.uniform1f(s.uniforms.uRampMax, rampMax);
    gl.uniform1i(s.uniforms.uColorBy, state.colorBy === "joint" ? 1 : 0);
    gl.uniform3fv(s.uniforms.uLightDir, light);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, g.palette);
    gl.uniform1i(s.uniforms.uPalette, 0);
    gl.bindVertexArray(g.vao);
    gl.drawElements(gl.TRIANGLES, glState.indexCount, gl.UNSIGNED_INT, 0);
  }

  function draw() {
    if (!glState) return;
    const dpr = resize();
    upload();
    gl.enable(gl.SCISSOR_TEST);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.disable(gl.CULL_FACE);
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.scissor(0, 0, canvas.width, canvas.height);
    gl.clearColor(SEPARATOR[0], SEPARATOR[1], SEPARATOR[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    panelRects().forEach((rc, i) => {
      const x = Math.round(rc.x * dpr);
      const w = Math.round(rc.width * dpr);
      const h = canvas.height;
      gl.viewport(x, 0, w, h);
      gl.scissor(x, 0, w, h);
      gl.clearColor(BACKGROUND[0], BACKGROUND[1], BACKGROUND[2], 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      const cam = camera(w / h);
      if (i === 0) {
        drawGround(cam.viewProj, cam.light, GROUND_TRUTH_COLOR, 1);
        return;
      }
      // The artist's surface as a flat dark silhouette, then the bake drawn
      // over it (depth cleared): the whole heatmap stays visible and the
      // silhouette shows only where the artist's shape sticks out.
      drawGround(cam.viewProj, cam.light, SILHOUETTE_COLOR, 0);
      gl.clear(gl.DEPTH_BUFFER_BIT);
      if (glState.bakes[i - 1].hasFrame) drawBake(i - 1, cam.viewProj, cam.light);
    });
    gl.bindVertexArray(null);
  }

  // ---- time, input, API -------------------------------------------------------

  function frameAtTime(c, t) {
    let f = 0;
    while (f + 1 < c.frame_count && c.times[f + 1] - c.times[0] <= t + 1e-6) f += 1;
    return f;
  }

  function setFrame(k) {
    const c = clipData();
    state.frame = Math.max(0, Math.min(c.frame_count - 1, Math.floor(Number(k)) || 0));
    state.time = (c.times[state.frame] ?? 0) - (c.times[0] ?? 0);
    updateDom();
    draw();
  }

  function setClip(i) {
    const ci = typeof i === "string" && !/^\d+$/.test(i) ? data.clips.findIndex((c) => c.name === i) : Number(i);
    if (!(ci >= 0 && ci < data.clips.length)) throw new Error(`no clip ${i}`);
    state.clip = ci;
    clipSelect.value = String(ci);
    setFrame(0);
  }

  function setResult(r) {
    const ri = Number(r);
    if (!(ri >= 0 && ri < data.results.length)) throw new Error(`no result ${r}`);
    state.result = ri;
    resultSelect.value = String(ri);
    updateDom();
  }

  function setColorBy(m) {
    if (m !== "error" && m !== "joint") throw new Error(`colour by "${m}": error or joint`);
    state.colorBy = m;
    updateDom();
    draw();
  }

  function setPlaying(p) {
    state.playing = Boolean(p);
    updateDom();
  }

  let lastTick = null;
  function tick(now) {
    if (state.playing && lastTick !== null) {
      const c = clipData();
      const span = frameTimeSpan(c);
      if (span > 0) {
        state.time = (state.time + (now - lastTick) / 1000) % span;
        const f = frameAtTime(c, state.time);
        if (f !== state.frame) {
          state.frame = f;
          updateDom();
          draw();
        }
      }
    }
    lastTick = now;
    requestAnimationFrame(tick);
  }

  function afterPaint() {
    return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  }

  clipSelect.addEventListener("change", () => setClip(clipSelect.value));
  resultSelect.addEventListener("change", () => setResult(resultSelect.value));
  colorSelect.addEventListener("change", () => setColorBy(colorSelect.value));
  slider.addEventListener("input", () => { state.playing = false; setFrame(slider.value); });
  playButton.addEventListener("click", () => setPlaying(!state.playing));
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLSelectElement || ev.target instanceof HTMLInputElement) return;
    if (ev.key === " ") { setPlaying(!state.playing); ev.preventDefault(); }
    if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      state.playing = false;
      const c = clipData();
      const step = ev.key === "ArrowRight" ? 1 : -1;
      setFrame((state.frame + step + c.frame_count) % c.frame_count);
    }
    if (ev.key === "u") { state.upAxis = state.upAxis === 1 ? 2 : 1; draw(); }
  });
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    state.yaw -= (ev.clientX - drag.x) * 0.01;
    state.pitch = Math.max(-1.5, Math.min(1.5, state.pitch + (ev.clientY - drag.y) * 0.01));
    drag = { x: ev.clientX, y: ev.clientY };
    draw();
  });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("wheel", (ev) => {
    state.zoom = Math.max(0.1, Math.min(20, state.zoom * Math.exp(ev.deltaY * 0.001)));
    ev.preventDefault();
    draw();
  }, { passive: false });
  window.addEventListener("resize", () => { updateLabels(); draw(); });

  window.sksReport = {
    data,
    clips: data.clips.map((c) => c.name),
    results: data.results.map((r) => r.mode),
    setClip(i) { setClip(i); return afterPaint(); },
    setFrame(k) { state.playing = false; setFrame(k); return afterPaint(); },
    setResult(r) { setResult(r); return afterPaint(); },
    setColorBy(m) { setColorBy(m); return afterPaint(); },
    play() { setPlaying(true); },
    pause() { setPlaying(false); return afterPaint(); },
    setView(yaw, pitch, zoom) {
      state.yaw = Number(yaw);
      state.pitch = Number(pitch);
      if (zoom !== undefined) state.zoom = Number(zoom);
      draw();
      return afterPaint();
    },
    state() {
      const b = activeBake();
      return {
        clip: state.clip,
        frame: state.frame,
        result: state.result,
        frameCount: clipData().frame_count,
        playing: state.playing,
        colorBy: state.colorBy,
        meanErrorPct: b ? b.frame_mean_error_pct[state.frame] : null,
        worstErrorPct: b ? b.frame_worst_error_pct[state.frame] : null
      };
    },
    panels() {
      return panelRects().map((rc, i) => ({ ...rc, title: panelTitle(i).title }));
    },
    // The bind positions the viewer skins for one bake at a shown frame
    // (morph targets applied), for checks: a Float32Array of 3 * V.
    morphedBind(clip, result, frame) { return morphedForCheck(morphPositions, mesh.positions, clip, result, frame); },
    // The same for the normals a bake shades with (normal deltas applied,
    // not normalised): a Float32Array of 3 * V.
    morphedNormals(clip, result, frame) {
      return morphedForCheck(morphNormals, mesh.normals, clip, result, frame);
    },
    // Decoded e / D of one bake (percent), for checks: {min, max, mean} over all frames.
    vertexErrorStats(clip, result) {
      const a = clipArrays(Number(clip)).baked[Number(result)];
      if (!a) return null;
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      for (let i = 0; i < a.error.length; i += 1) {
        const v = halfToFloat(a.error[i]);
        if (v < min) min = v;
        if (v > max) max = v;
        sum += v;
      }
      return { min, max, mean: sum / Math.max(1, a.error.length) };
    }
  };

  updateDom();
  if (!gl) {
    el("viewer-message").hidden = false;
    el("viewer-message").textContent = "This browser gives no WebGL2 context: the 3D viewer is off " +
      "(the table and plots above and below still hold every number).";
    document.body.dataset.ready = "no-webgl";
    return;
  }
  try {
    initGl();
    draw();
  } catch (e) {
    el("viewer-message").hidden = false;
    el("viewer-message").textContent = `Viewer error: ${e.message}`;
    document.body.dataset.ready = "error";
    throw e;
  }
  afterPaint().then(() => {
    document.body.dataset.ready = "1";
    requestAnimationFrame(tick);
  });
}());
