// The providers a session may start on, as the page shows them: made from the relay's
// GET /api/providers (docs/api.md), so the page keeps no list of its own. Pure: no DOM, no
// fetch. Unit-tested in test/web/provider-choices.test.ts.

/** What each ask_user variant means; a variant the page has no words for shows no hint. */
const VARIANT_HINT = {
  classic: 'One question with choices',
  form: 'Fields from a schema',
};

export const variantHint = (variant) => VARIANT_HINT[variant] ?? '';

const isText = (value) => typeof value === 'string' && value.length > 0;
const unreadable = () => new Error('The relay’s list of providers could not be read.');

/**
 * GET /api/providers' body → [{id, name, engines: [{id, name, variants}]}], each provider's
 * engines with its default first (the engine a start without one gets, and the one the
 * form shows first). Throws one sentence on a body that is not such a list.
 */
export function providerChoices(body) {
  if (!Array.isArray(body?.providers)) throw unreadable();
  return body.providers.map((p) => {
    if (!isText(p?.id) || !Array.isArray(p.engines) || !p.engines.length) throw unreadable();
    const engines = p.engines.map((e) => {
      if (!isText(e?.id)) throw unreadable();
      const variants = Array.isArray(e.askUserVariants) ? e.askUserVariants.filter(isText) : [];
      return { id: e.id, name: isText(e.name) ? e.name : e.id, isDefault: e.default === true, variants };
    });
    const ordered = [...engines.filter((e) => e.isDefault), ...engines.filter((e) => !e.isDefault)];
    return { id: p.id, name: isText(p.name) ? p.name : p.id, engines: ordered.map(({ isDefault: _, ...e }) => e) };
  });
}

/** The provider's choice, or undefined (an unknown id, or the list has not arrived). */
export const providerOf = (choices, providerId) => choices?.find((p) => p.id === providerId);

/** The engine's choice under its provider, or undefined. */
export const engineOf = (choices, providerId, engineId) => providerOf(choices, providerId)?.engines.find((e) => e.id === engineId);

/** A provider's name ("GitHub Copilot"); its id while the list is not there; "Agent" for none. */
export const nameOf = (choices, providerId) => providerOf(choices, providerId)?.name ?? providerId ?? 'Agent';
