// config.xml for pipeline and multibranch jobs, folders and list views, as mapped in docs/jobs.md,
// built with xmlbuilder2 so that every value from the file is escaped. The element layout follows
// the configs Jenkins itself writes for these classes (see test/jenkins/reference-samples.ts).
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { branchSpec, lightweightCheckout } from './branch.js';
import type { JobSpec, LogRotator } from './model.js';
import { foldChar } from './names.js';

export const CLASS = {
  pipeline: 'org.jenkinsci.plugins.workflow.job.WorkflowJob',
  multibranch: 'org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject',
  folder: 'com.cloudbees.hudson.plugins.folder.Folder',
  listView: 'hudson.model.ListView',
} as const;

const MULTIBRANCH = CLASS.multibranch;

/** The columns of every view we write: status, weather, name, last success/failure/duration, build. */
export const VIEW_COLUMNS = [
  'hudson.views.StatusColumn',
  'hudson.views.WeatherColumn',
  'hudson.views.JobColumn',
  'hudson.views.LastSuccessColumn',
  'hudson.views.LastFailureColumn',
  'hudson.views.LastDurationColumn',
  'hudson.views.BuildButtonColumn',
];

function document(rootName: string): XMLBuilder {
  return create({ version: '1.0', encoding: 'UTF-8' }).ele(rootName);
}

function serialize(root: XMLBuilder): string {
  return `${root.end({ prettyPrint: true, indent: '  ' })}\n`;
}

/** Adds `<name>text</name>` and returns the parent, for chaining leaf values. */
function leaf(parent: XMLBuilder, name: string, text: string | number | boolean): XMLBuilder {
  parent.ele(name).txt(String(text));
  return parent;
}

/** The config.xml of a job; `description` already carries the ownership marker. */
export function jobXml(job: JobSpec, description: string): string {
  return job.kind === 'pipeline' ? pipelineXml(job, description) : multibranchXml(job, description);
}

function pipelineXml(job: JobSpec, description: string): string {
  const root = document('flow-definition');
  root.ele('actions');
  leaf(root, 'description', description);
  leaf(root, 'keepDependencies', false);
  const properties = root.ele('properties');
  if (job.logRotator) buildDiscarder(properties, job.logRotator);
  if (job.cronTrigger !== undefined || job.git.trigger !== undefined) {
    const triggers = properties.ele('org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty').ele('triggers');
    if (job.cronTrigger !== undefined) leaf(triggers.ele('hudson.triggers.TimerTrigger'), 'spec', job.cronTrigger);
    // An empty spec is polling on post-commit hooks only (SCMTrigger), which Jenkins accepts.
    if (job.git.trigger !== undefined) {
      const scmTrigger = triggers.ele('hudson.triggers.SCMTrigger');
      leaf(scmTrigger, 'spec', job.git.trigger);
      leaf(scmTrigger, 'ignorePostCommitHooks', false);
    }
  }
  const definition = root.ele('definition', { class: 'org.jenkinsci.plugins.workflow.cps.CpsScmFlowDefinition' });
  const scm = definition.ele('scm', { class: 'hudson.plugins.git.GitSCM' });
  leaf(scm, 'configVersion', 2);
  // No <name>: the remote stays `origin`, so GIT_BRANCH stays origin/<branch> (docs/jobs.md).
  const remote = scm.ele('userRemoteConfigs').ele('hudson.plugins.git.UserRemoteConfig');
  leaf(remote, 'url', job.git.url);
  if (job.git.credentialsId) leaf(remote, 'credentialsId', job.git.credentialsId);
  const branch = branchSpec(job.branch);
  leaf(scm.ele('branches').ele('hudson.plugins.git.BranchSpec'), 'name', branch);
  leaf(scm, 'doGenerateSubmoduleConfigurations', false);
  scm.ele('submoduleCfg', { class: 'empty-list' });
  scm.ele('extensions');
  leaf(definition, 'scriptPath', job.scriptPath);
  leaf(definition, 'lightweight', lightweightCheckout(branch, job.git.trigger !== undefined));
  root.ele('triggers');
  if (job.authToken) leaf(root, 'authToken', job.authToken);
  leaf(root, 'disabled', false);
  return serialize(root);
}

function buildDiscarder(properties: XMLBuilder, rotator: LogRotator): void {
  const strategy = properties.ele('jenkins.model.BuildDiscarderProperty').ele('strategy', { class: 'hudson.tasks.LogRotator' });
  leaf(strategy, 'daysToKeep', rotator.daysToKeep);
  leaf(strategy, 'numToKeep', rotator.numToKeep);
  // Artifacts follow the builds; the older script wrote numToKeep here and never capped history.
  leaf(strategy, 'artifactDaysToKeep', -1);
  leaf(strategy, 'artifactNumToKeep', -1);
}

/**
 * The health metric a folder made in the UI gets (cloudbees-folder, WorstChildHealthMetric
 * .DescriptorImpl.createDefault: recursive, written as `nonRecursive` false). An empty
 * `<healthMetrics/>` is read as "no metrics", and the weather column of a view stays blank.
 */
function healthMetrics(root: XMLBuilder): void {
  const metric = root.ele('healthMetrics').ele('com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric');
  leaf(metric, 'nonRecursive', false);
}

function ownerOf(parent: XMLBuilder, reference: string): void {
  parent.ele('owner', { class: MULTIBRANCH, reference });
}

function multibranchXml(job: JobSpec, description: string): string {
  const root = document(MULTIBRANCH);
  root.ele('actions');
  leaf(root, 'description', description);
  root.ele('properties');
  ownerOf(root.ele('folderViews', { class: 'jenkins.branch.MultiBranchProjectViewHolder' }), '../..');
  healthMetrics(root);
  ownerOf(root.ele('icon', { class: 'jenkins.branch.MetadataActionFolderIcon' }), '../..');
  // logRotator governs how long jobs of deleted branches stay (docs/jobs.md); null keeps them. Pruning
  // with neither limit would remove them all at once (DefaultOrphanedItemStrategy), so unlimited
  // days and count keep them too.
  const orphans = root.ele('orphanedItemStrategy', { class: 'com.cloudbees.hudson.plugins.folder.computed.DefaultOrphanedItemStrategy' });
  const limited = job.logRotator !== null && (job.logRotator.daysToKeep !== -1 || job.logRotator.numToKeep !== -1);
  leaf(orphans, 'pruneDeadBranches', limited);
  leaf(orphans, 'daysToKeep', job.logRotator?.daysToKeep ?? -1);
  leaf(orphans, 'numToKeep', job.logRotator?.numToKeep ?? -1);
  leaf(orphans, 'abortBuilds', false);
  const triggers = root.ele('triggers');
  // A cron string cannot be the UI's interval trigger: a timer runs branch indexing instead.
  if (job.git.trigger) leaf(triggers.ele('hudson.triggers.TimerTrigger'), 'spec', job.git.trigger);
  leaf(root, 'disabled', false);
  const sources = root.ele('sources', { class: 'jenkins.branch.MultiBranchProject$BranchSourceList' });
  const branchSource = sources.ele('data').ele('jenkins.branch.BranchSource');
  const source = branchSource.ele('source', { class: 'jenkins.plugins.git.GitSCMSource' });
  leaf(source, 'id', job.git.repositoryId);
  leaf(source, 'remote', job.git.url);
  if (job.git.credentialsId) leaf(source, 'credentialsId', job.git.credentialsId);
  source.ele('traits').ele('jenkins.plugins.git.traits.BranchDiscoveryTrait');
  branchSource.ele('strategy', { class: 'jenkins.branch.DefaultBranchPropertyStrategy' }).ele('properties', { class: 'empty-list' });
  ownerOf(sources, '../..');
  const factory = root.ele('factory', { class: 'org.jenkinsci.plugins.workflow.multibranch.WorkflowBranchProjectFactory' });
  ownerOf(factory, '../..');
  leaf(factory, 'scriptPath', job.scriptPath);
  return serialize(root);
}

/** A plain folder, made for jobs named `folder/job`. */
export function folderXml(): string {
  const root = document(CLASS.folder);
  root.ele('actions');
  root.ele('description');
  root.ele('properties');
  healthMetrics(root);
  root.ele('icon', { class: 'com.cloudbees.hudson.plugins.folder.icons.StockFolderIcon' });
  return serialize(root);
}

/** A top-level list view naming its jobs by full name, recursing into folders when one is in one. */
export function listViewXml(name: string, jobNames: string[], description: string): string {
  const root = document(CLASS.listView);
  leaf(root, 'name', name);
  leaf(root, 'description', description);
  leaf(root, 'filterExecutors', false);
  leaf(root, 'filterQueue', false);
  root.ele('properties', { class: 'hudson.model.View$PropertyList' });
  const names = root.ele('jobNames');
  names.ele('comparator', { class: 'hudson.util.CaseInsensitiveComparator' });
  for (const job of sortedJobNames(jobNames)) leaf(names, 'string', job);
  root.ele('jobFilters');
  const columns = root.ele('columns');
  for (const column of VIEW_COLUMNS) columns.ele(column);
  leaf(root, 'recurse', jobNames.some((job) => job.includes('/')));
  return serialize(root);
}

/**
 * The order of ListView.jobNames, a TreeSet with CaseInsensitiveComparator, which Jenkins writes
 * back in that order: String.compareToIgnoreCase, by character code and not by locale.
 */
export function sortedJobNames(names: string[]): string[] {
  return [...names].sort(compareIgnoreCase);
}

/** java.lang.String.compareToIgnoreCase: char by char, each folded to upper then lower case. */
function compareIgnoreCase(a: string, b: string): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const difference = foldCase(a.charAt(i)) - foldCase(b.charAt(i));
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

function foldCase(char: string): number {
  return foldChar(char).charCodeAt(0);
}
