/**
 * The parts of a UI message as the chat page shows them: text, reasoning, tool parts with their
 * state (approve / deny on each `approval-requested` part — one reply may ask for several, and a
 * sub-agent's request says which of its actions it is — or edit the arguments as JSON and approve
 * those; an answer box for a tool a person answers, while no turn runs), what a call a person
 * changed ran with, the `data-polyloop-settle` part with one button per reply it accepts, and a
 * turn that was stopped, with its reason.
 */
import { getToolName, isToolUIPart } from 'ai';
import type { DynamicToolUIPart, ToolUIPart, UIMessage } from 'ai';
import type { JsonObject } from '../../../src/core/index.ts';
import { useState } from 'react';
import type { JSX } from 'react';

/** A reply to a settlement, as the settle part's `data.reply` carries it (the server adds its resultId). */
export type SettleReply = { kind: 'executed'; observation: string } | { kind: 'retry' } | { kind: 'cancel' };

/** What the page does when a person acts on a part. */
export type PartActions = {
  readonly approve: (approvalId: string, approved: boolean, reason: string) => void;
  /** Approve with the arguments a person typed instead of the model's. */
  readonly approveEdited: (approvalId: string, args: JsonObject) => void;
  /** The JSON a person typed for an approval the server then refused: shown again to be put right. */
  readonly draftOf: (approvalId: string) => string | undefined;
  readonly answer: (tool: string, toolCallId: string, text: string) => void;
  readonly settle: (partId: string, reply: SettleReply) => void;
};

type ToolPart = ToolUIPart | DynamicToolUIPart;
type ToolProps = { readonly part: ToolPart; readonly actions: PartActions };

/** A `data-polyloop-edit` part's data: the page's own `{ arguments }`, then the server's (with the proposal). */
type EditData = { readonly arguments?: unknown; readonly proposed?: unknown };

/** The settle part's data, as the server sends it (see docs/chat.md). */
type SettleData = {
  readonly action?: unknown;
  readonly accepts?: readonly string[];
  readonly reply?: { readonly kind: string };
};

const json = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The arguments a person typed, or why they are none: the server checks them against the tool's schema. */
function parseArguments(text: string): JsonObject | string {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as JsonObject;
    return 'the arguments must be a JSON object';
  } catch (e) {
    return `not JSON: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function EditForm({ part, actions }: ToolProps): JSX.Element {
  const id = part.approval?.id ?? '';
  const [text, setText] = useState(() => actions.draftOf(id) ?? JSON.stringify(part.input ?? {}, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  const send = (): void => {
    const args = parseArguments(text);
    if (typeof args === 'string') return setProblem(args);
    setProblem(null);
    actions.approveEdited(id, args);
  };
  return (
    <div className="edit">
      <textarea className="edit-args" rows={5} value={text} onChange={(e) => setText(e.target.value)} />
      {problem !== null && <div className="edit-problem">{problem}</div>}
      <button className="approve-edited" onClick={send}>
        Approve with these arguments
      </button>
    </div>
  );
}

function Approval({ part, actions }: ToolProps): JSX.Element | null {
  const [reason, setReason] = useState('');
  const id = part.approval?.id ?? '';
  const [editing, setEditing] = useState(() => actions.draftOf(id) !== undefined);
  if (part.state !== 'approval-requested') return null;
  // A sub-agent's action is approved as it asks: its arguments are not the turn's to edit.
  const editable = part.approval.descriptor === undefined;
  return (
    <div className="reply">
      {/* A sub-agent's request: the server names the sub-agent's run and the action it asks to run. */}
      {part.approval.requestReason && <div className="asks">{part.approval.requestReason}</div>}
      <button className="approve" onClick={() => actions.approve(id, true, '')}>
        Approve
      </button>
      {editable && !editing && (
        <button className="edit" onClick={() => setEditing(true)}>
          Edit and approve
        </button>
      )}
      <input
        className="reason"
        placeholder="reason (optional)"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <button className="deny" onClick={() => actions.approve(id, false, reason)}>
        Deny
      </button>
      {editable && editing && <EditForm part={part} actions={actions} />}
    </div>
  );
}

function Answer({ part, actions }: ToolProps): JSX.Element {
  const [text, setText] = useState('');
  const send = (): void => {
    if (text.trim() !== '') actions.answer(getToolName(part), part.toolCallId, text.trim());
  };
  return (
    <form
      className="reply"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <input className="answer-text" placeholder="your answer" value={text} onChange={(e) => setText(e.target.value)} />
      <button className="answer">Answer</button>
    </form>
  );
}

type ToolViewProps = ToolProps & { readonly awaiting: boolean; readonly edit: EditData | undefined };

function ToolView({ part, actions, awaiting, edit }: ToolViewProps): JSX.Element {
  const name = getToolName(part);
  const reason = 'approval' in part && part.approval?.reason ? `: ${part.approval.reason}` : '';
  // What ran when a person changed the call: on the part once its output is in, on the edit part before.
  const meta = 'resultProviderMetadata' in part ? part.resultProviderMetadata : undefined;
  const ran = (meta?.['polyloop'] as { editedArguments?: unknown } | undefined)?.editedArguments ?? edit?.arguments;
  return (
    <div className="tool" data-tool={name} data-state={part.state} data-call={part.toolCallId}>
      <div className="head">
        {/* The call as the model proposed it. */}
        <code className="proposed">
          {name}({json(part.input ?? {})})
        </code>{' '}
        <span className={`pill ${part.state}`}>{part.state}</span>
      </div>
      {ran !== undefined && (
        <div className="edited">
          changed by a person, runs with <code className="ran-with">{json(ran)}</code>
        </div>
      )}
      {part.state === 'output-available' && <div className="output">{json(part.output)}</div>}
      {part.state === 'output-error' && <div className="output error">{part.errorText}</div>}
      {part.state === 'output-denied' && <div className="output denied">denied{reason}</div>}
      {/* Each request is answered on its own, while no turn runs: the turn waits on the others meanwhile. */}
      {awaiting && <Approval part={part} actions={actions} />}
      {/* A tool part with input and no output while no turn runs: the turn waits for a person's answer. */}
      {awaiting && part.state === 'input-available' && <Answer part={part} actions={actions} />}
    </div>
  );
}

type SettleProps = {
  readonly id: string;
  readonly data: SettleData;
  readonly actions: PartActions;
  readonly open: boolean;
};

function Settle({ id, data, actions, open }: SettleProps): JSX.Element {
  const [observation, setObservation] = useState('It happened: the email went out.');
  const accepts = data.accepts ?? [];
  const settled = data.reply?.kind;
  const button = (kind: 'retry' | 'cancel', label: string): JSX.Element | null =>
    accepts.includes(kind) ? (
      <button className={`settle-${kind}`} onClick={() => actions.settle(id, { kind })}>
        {label}
      </button>
    ) : null;
  return (
    <div className="settle" data-state={settled === undefined ? 'open' : 'settled'}>
      <div>
        An action may or may not have happened when the turn was interrupted: <code>{json(data.action)}</code>
      </div>
      {settled !== undefined && <div className="output">settled: {settled}</div>}
      {settled === undefined && open && (
        <div className="reply">
          {accepts.includes('executed') && (
            <>
              <input className="observation" value={observation} onChange={(e) => setObservation(e.target.value)} />
              <button className="settle-executed" onClick={() => actions.settle(id, { kind: 'executed', observation })}>
                It happened
              </button>
            </>
          )}
          {button('retry', 'Run it again')}
          {button('cancel', 'Cancel the turn')}
        </div>
      )}
    </div>
  );
}

type MessageProps = { readonly message: UIMessage; readonly actions: PartActions; readonly awaiting: boolean };

/** The `data-polyloop-edit` parts of a message, by their id (the approval's). */
function editsOf(message: UIMessage): Map<string, EditData> {
  const edits = new Map<string, EditData>();
  for (const p of message.parts) {
    if (p.type === 'data-polyloop-edit' && 'id' in p && typeof p.id === 'string') edits.set(p.id, p.data as EditData);
  }
  return edits;
}

/** A stopped turn's `data-polyloop-stop` part: it says so, with the reason given to the stop. */
function Stopped({ data }: { readonly data: { readonly reason?: string } }): JSX.Element {
  return <p className="stopped">Stopped{data.reason ? `: ${data.reason}` : ' (no reason given)'}</p>;
}

/** One message; `awaiting`: no turn runs and this is the last message, so its open parts wait for a person. */
export function MessageView({ message, actions, awaiting }: MessageProps): JSX.Element {
  const edits = editsOf(message);
  return (
    <li className={`msg ${message.role}`} data-role={message.role} data-id={message.id}>
      {message.parts.map((part, i) => {
        if (part.type === 'text')
          return (
            <p key={i} className="text">
              {part.text}
            </p>
          );
        if (part.type === 'reasoning')
          return (
            <p key={i} className="reasoning">
              {part.text}
            </p>
          );
        if (isToolUIPart(part)) {
          const edit = part.approval === undefined ? undefined : edits.get(part.approval.id);
          return <ToolView key={i} part={part} actions={actions} awaiting={awaiting} edit={edit} />;
        }
        if (part.type === 'data-polyloop-settle') {
          const { id, data } = part as { id?: string; data: SettleData };
          return <Settle key={i} id={id ?? ''} data={data} actions={actions} open={awaiting} />;
        }
        if (part.type === 'data-polyloop-stop') return <Stopped key={i} data={part.data as { reason?: string }} />;
        return null;
      })}
    </li>
  );
}
