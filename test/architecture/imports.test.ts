import { describe, expect, it } from 'vitest';
import { importCircles, importGraph } from './import-graph.js';

// The layering docs/architecture.md states, checked on the import graph of src/ and providers/.

const graph = importGraph();
const importers = (target: (file: string) => boolean, from: (file: string) => boolean) =>
  [...graph].flatMap(([file, targets]) => (from(file) ? targets.filter(target).map((t) => `${file} → ${t}`) : []));
const under = (...dirs: string[]) => (file: string) => dirs.some((dir) => file.startsWith(`${dir}/`));

describe('the import graph', () => {
  it('reads the repo (the composition root imports the provider registry)', () => {
    expect(graph.get('src/start.ts')).toContain('providers/index.ts');
  });

  it('has no import circles (type-only imports count)', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('only src/start.ts imports providers/ from src/', () => {
    expect(importers(under('providers'), (f) => under('src')(f) && f !== 'src/start.ts')).toEqual([]);
  });

  it('providers never import a surface (src/server, src/cli, src/channels)', () => {
    expect(importers(under('src/server', 'src/cli', 'src/channels'), under('providers'))).toEqual([]);
  });

  it('the store never imports the sessions layer (the session record is the store\'s own)', () => {
    expect(importers(under('src/sessions'), under('src/store'))).toEqual([]);
  });
});
