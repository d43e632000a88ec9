/**
 * The parts of a UI message as the chat page shows them: text, reasoning, tool parts with their
 * state (approve / deny on each `approval-requested` part — one reply may ask for several, and a
 * sub-agent's request says which of its actions it is — and an answer box for a tool a person
 * answers, while no turn runs), and the `data-polyloop-settle` part with one button per reply it
 * accepts.
 */
import { getToolName, isToolUIPart } from 'ai';
import type { DynamicToolUIPart, ToolUIPart, UIMessage } from 'ai';
import { useState } from 'react';
import type { JSX } from 'react';

/** A reply to a settlement, as the settle part's `data.reply` carries it (the server adds its resultId). */
export type SettleReply = { kind: 'executed'; observation: string } | { kind: 'retry' } | { kind: 'cancel' };

/** What the page does when a person acts on a part. */
export type PartActions = {
  readonly approve: (approvalId: string, approved: boolean, reason: string) => void;
  readonly answer: (tool: string, toolCallId: string, text: string) => void;
  readonly settle: (partId: string, reply: SettleReply) => void;
};

type ToolPart = ToolUIPart | DynamicToolUIPart;
type ToolProps = { readonly part: ToolPart; readonly actions: PartActions };

/** The settle part's data, as the server sends it (see docs/chat.md). */
type SettleData = {
  readonly action?: unknown;
  readonly accepts?: readonly string[];
  readonly reply?: { readonly kind: string };
};

const json = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function Approval({ part, actions }: ToolProps): JSX.Element | null {
  const [reason, setReason] = useState('');
  if (part.state !== 'approval-requested') return null;
  const id = part.approval.id;
  return (
    <div className="reply">
      {/* A sub-agent's request: the server names the sub-agent's run and the action it asks to run. */}
      {part.approval.requestReason && <div className="asks">{part.approval.requestReason}</div>}
      <button className="approve" onClick={() => actions.approve(id, true, '')}>
        Approve
      </button>
      <input
        className="reason"
        placeholder="reason (optional)"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <button className="deny" onClick={() => actions.approve(id, false, reason)}>
        Deny
      </button>
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

function ToolView({ part, actions, awaiting }: ToolProps & { readonly awaiting: boolean }): JSX.Element {
  const name = getToolName(part);
  const reason = 'approval' in part && part.approval?.reason ? `: ${part.approval.reason}` : '';
  return (
    <div className="tool" data-tool={name} data-state={part.state} data-call={part.toolCallId}>
      <div className="head">
        <code>
          {name}({json(part.input ?? {})})
        </code>{' '}
        <span className={`pill ${part.state}`}>{part.state}</span>
      </div>
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

/** One message; `awaiting`: no turn runs and this is the last message, so its open parts wait for a person. */
export function MessageView({ message, actions, awaiting }: MessageProps): JSX.Element {
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
        if (isToolUIPart(part)) return <ToolView key={i} part={part} actions={actions} awaiting={awaiting} />;
        if (part.type === 'data-polyloop-settle') {
          const { id, data } = part as { id?: string; data: SettleData };
          return <Settle key={i} id={id ?? ''} data={data} actions={actions} open={awaiting} />;
        }
        return null;
      })}
    </li>
  );
}
