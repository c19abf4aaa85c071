import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

// The import graph of the repo's own TypeScript (src/ and providers/), read with the
// compiler's own pre-processor: every `import`, `import type`, `export … from` and `import()`
// is an edge, since a type-only import still ties one module to another.

export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const ROOT = resolve(import.meta.dirname, '../..');

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** A relative specifier as the repo writes it (`./x.js`, `../dir`) → the file, relative to the repo. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = join(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && existsSync(join(ROOT, c)));
}

export function importGraph(dirs: readonly string[] = ['src', 'providers']): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of dirs.flatMap(tsFiles)) {
    const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    const targets = info.importedFiles.map((f) => resolveSpecifier(file, f.fileName)).filter((t): t is string => t !== undefined);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/**
 * Every import circle, one per strongly connected group of modules (Tarjan), each shown as
 * one closed path through it (`a.ts → b.ts → a.ts`) and the group's other modules.
 */
export function importCircles(graph: ImportGraph): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.includes(node)) groups.push(group);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups.map((group) => {
    const path = closedPath(graph, group);
    const others = group.filter((m) => !path.includes(m)).sort();
    return path.join(' → ') + (others.length ? ` (the same circle also takes in ${others.join(', ')})` : '');
  });
}

/** The shortest way from the group's first module (by name) back to itself, inside the group. */
function closedPath(graph: ImportGraph, group: readonly string[]): string[] {
  const members = new Set(group);
  const start = [...group].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(to)) {
        cameFrom.set(to, node);
        queue.push(to);
      }
    }
  }
  return [...group, group[0]!];
}
