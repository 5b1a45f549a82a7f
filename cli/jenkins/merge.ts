// What an update sends for a pipeline job: the file's config merged into the live one, so that
// what a Jenkinsfile manages itself (parameters, options, triggers it declares, and the actions
// that track them) survives an apply, and is not a difference for `jobs diff` (docs/jobs.md,
// "Fields the Jenkinsfile may own"). Fields the file manages are still enforced.
//
// After each build, pipeline-model-definition's Utils.updateJobProperties (Declarative
// `parameters`, `options`, `triggers`) and workflow-multibranch's JobPropertyStep (scripted
// `properties([...])`) save job properties into the job's config, and record which ones in an
// action: DeclarativeJobPropertyTrackerAction (property descriptor ids, trigger descriptor ids,
// parameter names, option names) or JobPropertyTrackerAction (property descriptor ids).
import { create } from 'xmlbuilder2';

const TRIGGERS = 'org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty';
/** The job properties the file writes (xml.ts); every other live property is kept. */
const MANAGED_PROPERTIES = new Set(['jenkins.model.BuildDiscarderProperty', TRIGGERS]);
const DECLARATIVE_TRACKER = 'org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobPropertyTrackerAction';
const SCRIPTED_TRACKER = 'org.jenkinsci.plugins.workflow.multibranch.JobPropertyTrackerAction';

/** Root fields of WorkflowJob that only a Jenkinsfile (or a person) sets; the file never writes them. */
const KEPT_ROOT_FIELDS = ['actions', 'quietPeriod'];

/** What the live job says its Jenkinsfile owns: property classes and trigger classes. */
export interface JenkinsfileOwned {
  properties: Set<string>;
  triggers: Set<string>;
}

/** The property and trigger classes the tracker actions of a live config name. */
export function jenkinsfileOwned(live: string): JenkinsfileOwned {
  const root = rootOf(live);
  const actions = child(root, 'actions');
  const owned: JenkinsfileOwned = { properties: new Set(), triggers: new Set() };
  for (const action of elements(actions)) {
    if (action.nodeName === DECLARATIVE_TRACKER) {
      for (const id of strings(child(action, 'jobProperties'))) owned.properties.add(id);
      for (const id of strings(child(action, 'triggers'))) owned.triggers.add(id);
      // Parameters are kept by name, as the whole ParametersDefinitionProperty (never ours).
    }
    if (action.nodeName === SCRIPTED_TRACKER) {
      for (const id of strings(child(action, 'jobPropertyDescriptors'))) owned.properties.add(id);
    }
  }
  return owned;
}

/**
 * The file's pipeline job config with what the live job keeps beside it: its `actions` and
 * `quietPeriod`, every property the file does not write, the properties and trigger classes the
 * tracker actions name as the Jenkinsfile's (these replace the file's own of that class), and
 * triggers of classes the file does not write. Any other config (multibranch, folders) is
 * returned as it is: a Jenkinsfile sets properties on branch jobs, not on their project.
 */
export function mergeLive(live: string, desired: string): string {
  const liveRoot = rootOf(live);
  const doc = create(stripDeclaration(desired));
  const root = doc.root().node as unknown as Element;
  if (root.nodeName !== 'flow-definition' || liveRoot.nodeName !== 'flow-definition') return desired;
  const owned = jenkinsfileOwned(live);
  const adopt = (node: Element) => root.ownerDocument.importNode(node, true) as Element;

  for (const name of KEPT_ROOT_FIELDS) {
    const kept = child(liveRoot, name);
    if (!kept) continue;
    const mine = child(root, name);
    if (mine) root.replaceChild(adopt(kept), mine);
    else root.insertBefore(adopt(kept), child(root, 'authToken') ?? child(root, 'disabled') ?? null);
  }

  const properties = child(root, 'properties');
  const liveProperties = child(liveRoot, 'properties');
  if (properties && liveProperties) {
    for (const property of elements(liveProperties)) {
      const name = property.nodeName;
      const ownedByJenkinsfile = owned.properties.has(name);
      if (MANAGED_PROPERTIES.has(name) && !ownedByJenkinsfile) {
        if (name === TRIGGERS) mergeTriggers(child(properties, TRIGGERS), property, owned, adopt, properties);
        continue;
      }
      const mine = child(properties, name);
      if (mine) properties.removeChild(mine);
      properties.appendChild(adopt(property));
    }
  }
  return `${doc.end({ prettyPrint: true, indent: '  ' })}\n`;
}

/**
 * Our PipelineTriggersJobProperty with the live triggers it should keep: those of classes the
 * file does not write, and those of classes the Declarative tracker names (the Jenkinsfile's,
 * which Utils.updateJobProperties keeps one per class: the Jenkinsfile's wins over ours).
 */
function mergeTriggers(
  mine: Element | undefined,
  live: Element,
  owned: JenkinsfileOwned,
  adopt: (node: Element) => Element,
  properties: Element,
): void {
  const liveTriggers = elements(child(live, 'triggers'));
  const mineTriggers = mine ? child(mine, 'triggers') : undefined;
  const written = new Set(elements(mineTriggers).map((t) => t.nodeName));
  const kept = liveTriggers.filter((t) => owned.triggers.has(t.nodeName) || !written.has(t.nodeName));
  if (kept.length === 0) return;
  let target = mineTriggers;
  if (!target) {
    const property = properties.ownerDocument.createElement(TRIGGERS);
    target = properties.ownerDocument.createElement('triggers');
    property.appendChild(target);
    properties.appendChild(property);
  }
  for (const trigger of kept) {
    const same = elements(target).find((t) => t.nodeName === trigger.nodeName);
    if (same) target.removeChild(same);
    target.appendChild(adopt(trigger));
  }
}

function stripDeclaration(xml: string): string {
  return xml.replace(/^\uFEFF?\s*<\?xml[^?]*\?>/, '');
}

function rootOf(xml: string): Element {
  return create(stripDeclaration(xml)).root().node as unknown as Element;
}

function elements(parent: Element | undefined): Element[] {
  return parent ? (Array.from(parent.childNodes).filter((n) => n.nodeType === 1) as Element[]) : [];
}

function child(parent: Element | undefined, name: string): Element | undefined {
  return elements(parent).find((e) => e.nodeName === name);
}

function strings(parent: Element | undefined): string[] {
  return elements(parent).filter((e) => e.nodeName === 'string').map((e) => (e.textContent ?? '').trim());
}
