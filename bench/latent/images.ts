/**
 * 8×8 digit images as SVG (one grey square per pixel, white = 0, black = 1), for the decoded prior
 * samples and the best decoded digit per method. Plain SVG so the pictures need no library and
 * render in the README.
 */
const CELL = 4;
const GAP = 6;

function digit(x: readonly number[], ox: number, oy: number): string {
  const rects: string[] = [];
  x.forEach((v, i) => {
    const g = Math.round(255 * (1 - Math.min(1, Math.max(0, v))));
    if (g === 255) return;
    rects.push(`<rect x="${ox + (i % 8) * CELL}" y="${oy + Math.floor(i / 8) * CELL}" width="${CELL}" height="${CELL}" fill="rgb(${g},${g},${g})"/>`);
  });
  return rects.join('');
}

/** A grid of images, `columns` per row, each optionally captioned below. */
export function digitGridSvg(images: readonly (readonly number[])[], columns: number, captions?: readonly string[]): string {
  const side = 8 * CELL;
  const captionH = captions ? 14 : 0;
  const cellW = captions ? Math.max(side, 110) : side;
  const rows = Math.ceil(images.length / columns);
  const w = columns * (cellW + GAP) + GAP;
  const h = rows * (side + captionH + GAP) + GAP;
  const body = images.map((x, k) => {
    const ox = GAP + (k % columns) * (cellW + GAP) + (cellW - side) / 2;
    const oy = GAP + Math.floor(k / columns) * (side + captionH + GAP);
    const frame = `<rect x="${ox - 0.5}" y="${oy - 0.5}" width="${side + 1}" height="${side + 1}" fill="#fff" stroke="#bbb"/>`;
    const caption = captions ? `<text x="${ox + side / 2}" y="${oy + side + 11}" font-size="10" text-anchor="middle" font-family="sans-serif">${escapeXml(captions[k] ?? '')}</text>` : '';
    return frame + digit(x, ox, oy) + caption;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><rect width="100%" height="100%" fill="#fff"/>${body.join('')}</svg>\n`;
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}
