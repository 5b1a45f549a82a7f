import { describe, expect, it } from 'vitest';
import { jenkinsfileOwned, mergeLive } from './merge.js';
import { normalizeXml } from './normalize.js';

const TRIGGERS = 'org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty';
const DISCARDER = (days: number) =>
  `<jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>${days}</daysToKeep><numToKeep>5</numToKeep></strategy></jenkins.model.BuildDiscarderProperty>`;
const timer = (spec: string) => `<hudson.triggers.TimerTrigger><spec>${spec}</spec></hudson.triggers.TimerTrigger>`;

const desired = `<?xml version="1.0" encoding="UTF-8"?>
<flow-definition><actions/><description>d</description><properties>${DISCARDER(10)}<${TRIGGERS}><triggers>${timer('H 2 * * *')}</triggers></${TRIGGERS}></properties><definition/><triggers/><disabled>false</disabled></flow-definition>`;

function live(extra: { actions?: string; properties?: string; quietPeriod?: number }): string {
  return `<?xml version='1.1' encoding='UTF-8'?>
<flow-definition><actions>${extra.actions ?? ''}</actions><description>old</description><properties>${extra.properties ?? ''}</properties><definition/><triggers/>${extra.quietPeriod === undefined ? '' : `<quietPeriod>${extra.quietPeriod}</quietPeriod>`}<disabled>false</disabled></flow-definition>`;
}

const tracker = (properties: string[], triggers: string[]) =>
  `<org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobPropertyTrackerAction><jobProperties>${properties.map((p) => `<string>${p}</string>`).join('')}</jobProperties><triggers>${triggers.map((t) => `<string>${t}</string>`).join('')}</triggers><parameters/><options/></org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobPropertyTrackerAction>`;

describe('mergeLive', () => {
  it('keeps the live actions, quietPeriod and the properties the file does not write, and enforces its own', () => {
    const params = '<hudson.model.ParametersDefinitionProperty><parameterDefinitions/></hudson.model.ParametersDefinitionProperty>';
    const merged = mergeLive(live({ actions: tracker([], []), properties: `${DISCARDER(99)}${params}`, quietPeriod: 7 }), desired);
    expect(merged).toContain('DeclarativeJobPropertyTrackerAction');
    expect(merged).toContain('<quietPeriod>7</quietPeriod>');
    expect(merged).toContain('hudson.model.ParametersDefinitionProperty');
    expect(merged).toContain('<daysToKeep>10</daysToKeep>');
    expect(merged).not.toContain('<daysToKeep>99</daysToKeep>');
    expect(merged).toContain('<description>d</description>');
  });

  it('leaves to the Jenkinsfile the property and trigger classes its tracker names, and keeps triggers of other classes', () => {
    const scm = '<hudson.triggers.SCMTrigger><spec>H/5 * * * *</spec></hudson.triggers.SCMTrigger>';
    const owned = live({
      actions: tracker(['jenkins.model.BuildDiscarderProperty'], ['hudson.triggers.TimerTrigger']),
      properties: `${DISCARDER(99)}<${TRIGGERS}><triggers>${timer('H 5 * * *')}${scm}</triggers></${TRIGGERS}>`,
    });
    expect(jenkinsfileOwned(owned)).toEqual({ properties: new Set(['jenkins.model.BuildDiscarderProperty']), triggers: new Set(['hudson.triggers.TimerTrigger']) });
    const merged = normalizeXml(mergeLive(owned, desired));
    expect(merged).toContain('<daysToKeep>99</daysToKeep>');
    expect(merged).toContain('<spec>H 5 * * *</spec>');
    expect(merged).not.toContain('<spec>H 2 * * *</spec>');
    expect(merged).toContain('<spec>H/5 * * * *</spec>');
  });

  it('returns any other config as the file has it (a multibranch project is not merged)', () => {
    const multibranch = '<org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject><properties/></org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject>';
    expect(mergeLive(live({ quietPeriod: 3 }), multibranch)).toBe(multibranch);
  });
});
