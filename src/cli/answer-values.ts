import type { AnswerEntry, Question } from '../cards/model.js';

// Reading what someone typed as the answer to one question. Kept in this one function on
// purpose: a full plain-text parser will replace it.

/**
 * Each value is an option when it is an option's label (case-insensitive) or its 1-based
 * number; on a multi-select question a value may also list options separated by ",".
 * Several values that together spell one label pick that label. Everything else is free
 * text, joined with spaces, followed by `text`.
 */
export function readValues(question: Question, values: string[], text?: string): AnswerEntry {
  const match = (value: string): string | undefined => {
    const v = value.trim();
    const byLabel = question.options.find((o) => o.label.toLowerCase() === v.toLowerCase());
    if (byLabel) return byLabel.label;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    return n >= 1 && n <= question.options.length ? question.options[n - 1].label : undefined;
  };

  const selected: string[] = [];
  const words: string[] = [];
  const whole = values.length > 1 ? match(values.join(' ')) : undefined;
  for (const value of whole ? [whole] : values) {
    const label = match(value);
    if (label) {
      selected.push(label);
      continue;
    }
    const parts = question.multiSelect && value.includes(',') ? value.split(',').map((p) => p.trim()).filter(Boolean) : [];
    const labels = parts.map(match);
    if (parts.length && labels.some(Boolean)) {
      parts.forEach((part, i) => (labels[i] ? selected.push(labels[i]!) : words.push(part)));
    } else if (value.trim()) {
      words.push(value.trim());
    }
  }
  const typed = [...words, ...(text?.trim() ? [text.trim()] : [])].join(' ');
  return typed ? { selected, text: typed } : { selected };
}
