import type { RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { codexQuestions, questionContent, questionDraft } from '../../providers/codex/adapter.js';
import type { Card } from '../../src/cards/model.js';
import { allowOnce, permissionDraft, permissionOutcome } from '../../src/acp/permission.js';
import { restartPrompt } from '../../src/acp/restart.js';
import { readUpdate } from '../../src/acp/updates.js';
import { cardOf } from '../support/card-fixture.js';

// The pure halves of the ACP providers: permission requests and Codex's forms to cards and
// back, session/update to the transcript, and the prompt after a restart. The real agents
// run in codex-acp.test.ts and gemini-acp.test.ts.

const PERMISSION: RequestPermissionRequest = {
  sessionId: 's',
  toolCall: { toolCallId: 'call_1', kind: 'execute', status: 'pending', title: 'rm -rf build', rawInput: { command: 'rm -rf build', cwd: '/w' } },
  options: [
    { optionId: 'allow_once', name: 'Yes, proceed', kind: 'allow_once' },
    { optionId: 'always', name: 'Yes, and don\'t ask again', kind: 'allow_always' },
    { optionId: 'cancel', name: 'No', kind: 'reject_once' },
  ],
};

const closed = (draft: ReturnType<typeof permissionDraft>, status: Card['status'], answer?: Card['answer']): Card => ({
  ...cardOf([{ id: 'x', text: 'x' }]),
  ...draft,
  questions: draft.questions.map((q) => ({ id: q.id!, header: q.header, text: q.text, options: (q.options ?? []).map((o) => (typeof o === 'string' ? { label: o } : o)), multiSelect: false, freeText: false })),
  status,
  ...(answer ? { answer } : {}),
});

describe('permission requests', () => {
  it('one button per option, in order, the kind beneath; the pick selects that option, anything else cancels', () => {
    const draft = permissionDraft(PERMISSION, 'Codex');
    expect(draft).toMatchObject({ kind: 'approval', tool: 'permission:execute', origin: 'native', title: 'Codex asks for permission' });
    expect(draft.questions[0].text).toBe('rm -rf build\n\n$ rm -rf build');
    expect(draft.questions[0].options).toEqual([
      { label: 'Yes, proceed', description: 'Allow once' },
      { label: 'Yes, and don\'t ask again', description: 'Allow always' },
      { label: 'No', description: 'Reject' },
    ]);
    expect(permissionOutcome(PERMISSION, closed(draft, 'answered', { permission: { selected: ['No'] } }))).toEqual({ outcome: { outcome: 'selected', optionId: 'cancel' } });
    for (const status of ['skipped', 'expired', 'cancelled', 'pending'] as const) {
      expect(permissionOutcome(PERMISSION, closed(draft, status))).toEqual({ outcome: { outcome: 'cancelled' } });
    }
    expect(allowOnce(PERMISSION)).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect(allowOnce({ ...PERMISSION, options: [PERMISSION.options[2]] })).toEqual({ outcome: { outcome: 'cancelled' } });
  });

  it('after a restart the agent is told what came of it', () => {
    const draft = permissionDraft(PERMISSION, 'Codex');
    expect(restartPrompt({ kind: 'permission', draft, request: PERMISSION }, closed(draft, 'answered', { permission: { selected: ['Yes, proceed'] } }))).toBe(
      'askrelay restarted while your request was open, so the tool call that made it has ended. You asked for permission for: rm -rf build. The user chose "Yes, proceed", so it is allowed: run it again.',
    );
    expect(restartPrompt({ kind: 'permission', draft, request: PERMISSION }, closed(draft, 'expired'))).toMatch(/Nobody allowed it; do not run it\.$/);
  });
});

describe('Codex\'s request_user_input form', () => {
  const FORM = {
    message: 'Codex needs your input to continue.',
    requestedSchema: {
      type: 'object',
      properties: {
        db: {
          type: 'string',
          title: 'Which database?',
          description: 'Database',
          oneOf: [{ const: 'Postgres', title: 'Postgres', description: 'Shared' }, { const: 'None of the above', title: 'None of the above' }],
          _meta: { codex: { isOther: true } },
        },
        db_note: { type: 'string', title: 'Additional answer or note', _meta: { codex: { questionId: 'db', role: 'user_note' } } },
      },
      required: ['db'],
    },
  };

  it('is one step per question, "None of the above" left out; typed words become the note', () => {
    const questions = codexQuestions(FORM)!;
    expect(questionDraft(questions).questions).toEqual([
      { id: 'db', header: 'Database', text: 'Which database?', options: [{ label: 'Postgres', description: 'Shared' }], multiSelect: false, freeText: true },
    ]);
    const card = (answer: Card['answer']): Card => ({ ...cardOf([{ id: 'db', text: 'Which database?', options: ['Postgres'] }]), status: 'answered', answer });
    expect(questionContent(questions, card({ db: { selected: ['Postgres'] } }))).toEqual({ action: 'accept', content: { db: 'Postgres' } });
    expect(questionContent(questions, card({ db: { selected: [], text: 'MySQL' } }))).toEqual({ action: 'accept', content: { db: 'None of the above', db_note: 'MySQL' } });
    expect(questionContent(questions, card({ db: { selected: ['Postgres'], text: 'with replicas' } }))).toEqual({ action: 'accept', content: { db: 'Postgres', db_note: 'with replicas' } });
    expect(questionContent(questions, { ...card(undefined), status: 'skipped' })).toEqual({ action: 'decline' });
    expect(questionContent(questions, { ...card(undefined), status: 'expired' })).toEqual({ action: 'cancel' });
    // Any other form is the generic form card's.
    expect(codexQuestions({ message: 'x', requestedSchema: { properties: { name: { type: 'string' } } } })).toBeUndefined();
  });
});

describe('session/update in the transcript', () => {
  it('joins text, names tool calls when they start and end, and writes plans', () => {
    const titles = new Map<string, string>();
    expect(readUpdate({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hel' } }, titles)).toEqual({ kind: 'text', text: 'Hel' });
    expect(readUpdate({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'npm test', kind: 'execute' }, titles)).toEqual({ kind: 'entry', role: 'tool', text: 'npm test (execute)' });
    expect(readUpdate({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'in_progress' }, titles)).toBeUndefined();
    expect(readUpdate({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed' }, titles)).toEqual({ kind: 'entry', role: 'tool', text: 'npm test: failed' });
    expect(
      readUpdate({ sessionUpdate: 'plan', entries: [{ content: 'Read the code', status: 'completed', priority: 'high' }, { content: 'Fix it', status: 'in_progress', priority: 'high' }] }, titles),
    ).toEqual({ kind: 'entry', role: 'system', text: 'Plan:\n1. [x] Read the code\n2. [~] Fix it' });
    expect(readUpdate({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }, titles)).toBeUndefined();
  });
});
