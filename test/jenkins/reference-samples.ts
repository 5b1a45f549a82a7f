// The element layout of real config.xml files of the same kinds, taken from Jenkins' and its
// plugins' public repositories, as XPath expressions (one per element of the sample that our
// mapping covers, with its class attribute where the sample has one). The golden files must have
// every one of them. Each entry names the sample it was read from.

export interface ReferenceSample {
  /** The repository, path and commit of the real config.xml. */
  source: string;
  /** Which golden file it is compared with. */
  golden: string;
  /** Every element of the sample our mapping covers. */
  elements: string[];
  /** Elements of the sample we deliberately leave out, and why. */
  leftOut: Record<string, string>;
}

const SCM = "/flow-definition/definition/scm[@class='hudson.plugins.git.GitSCM']";
const MB = '/org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject';

export const REFERENCE_SAMPLES: ReferenceSample[] = [
  {
    source:
      'jenkinsci/workflow-cps-plugin plugin/src/test/resources/org/jenkinsci/plugins/workflow/cps/SerialFormTest/persistence/jobs/p/config.xml @24381c92ea4a73b93a95a501f3b70bc4c6fb237d',
    golden: 'team/nightly/config.xml',
    elements: [
      '/flow-definition',
      '/flow-definition/keepDependencies',
      '/flow-definition/properties',
      '/flow-definition/definition',
      '/flow-definition/triggers',
      '/flow-definition/disabled',
    ],
    leftOut: {
      "definition[@class='org.jenkinsci.plugins.workflow.cps.CpsFlowDefinition']/script": 'an inline script; docs/jobs.md maps pipelineScriptPath to CpsScmFlowDefinition',
    },
  },
  {
    source: 'jenkinsci/git-plugin src/test/resources/hudson/plugins/git/GitSCMTest/old1.xml @8396478987d6361156d2b51ddeaf1fb8e39517a4',
    golden: 'team/nightly/config.xml',
    elements: [
      SCM,
      `${SCM}/configVersion`,
      `${SCM}/userRemoteConfigs/hudson.plugins.git.UserRemoteConfig`,
      `${SCM}/userRemoteConfigs/hudson.plugins.git.UserRemoteConfig/url`,
      `${SCM}/branches/hudson.plugins.git.BranchSpec/name`,
      `${SCM}/doGenerateSubmoduleConfigurations`,
      `${SCM}/submoduleCfg`,
    ],
    leftOut: {
      'userRemoteConfigs/hudson.plugins.git.UserRemoteConfig/name': 'the remote keeps the default name origin, so GIT_BRANCH stays origin/<branch> (docs/jobs.md)',
      'userRemoteConfigs/hudson.plugins.git.UserRemoteConfig/refspec': 'the default refspec of origin',
      'disableSubmodules, clean, wipeOutWorkspace, gitTool, browser, ...': 'pre-2.0 git plugin fields, now extensions; Jenkins migrates them',
    },
  },
  {
    source: 'jenkinsci/git-plugin src/test/resources/jenkins/plugins/git/GitSCMSourceTraitsTest/modern.xml @c8d9a2b37ac8b55dd99dfa14222820f10ad34300',
    golden: 'team/app-multibranch/config.xml',
    elements: [
      `${MB}/sources/data/jenkins.branch.BranchSource/source[@class='jenkins.plugins.git.GitSCMSource']`,
      `${MB}/sources/data/jenkins.branch.BranchSource/source/id`,
      `${MB}/sources/data/jenkins.branch.BranchSource/source/remote`,
      `${MB}/sources/data/jenkins.branch.BranchSource/source/traits`,
    ],
    leftOut: {},
  },
  {
    source:
      'jenkinsci/job-dsl-plugin job-dsl-core/src/main/resources/javaposse/jobdsl/dsl/jobs/WorkflowMultiBranchJob-template.xml @853e0f02ef2d27385109deb2d0b04ac4081c15f5',
    golden: 'team/app-multibranch/config.xml',
    elements: [
      MB,
      `${MB}/actions`,
      `${MB}/description`,
      `${MB}/properties`,
      `${MB}/healthMetrics`,
      `${MB}/orphanedItemStrategy[@class='com.cloudbees.hudson.plugins.folder.computed.DefaultOrphanedItemStrategy']`,
      `${MB}/orphanedItemStrategy/pruneDeadBranches`,
      `${MB}/orphanedItemStrategy/daysToKeep`,
      `${MB}/orphanedItemStrategy/numToKeep`,
      `${MB}/triggers`,
      `${MB}/sources[@class='jenkins.branch.MultiBranchProject$BranchSourceList']`,
      `${MB}/sources/data`,
      `${MB}/sources/owner[@class='org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject'][@reference='../..']`,
      `${MB}/factory[@class='org.jenkinsci.plugins.workflow.multibranch.WorkflowBranchProjectFactory']`,
      `${MB}/factory/owner[@class='org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject'][@reference='../..']`,
    ],
    leftOut: {
      'views, viewsTabBar, primaryView': 'the layout before branch-api 2.0; current Jenkins writes folderViews, which we write',
      "icon[@class='com.cloudbees.hudson.plugins.folder.icons.StockFolderIcon']": 'a multibranch project gets jenkins.branch.MetadataActionFolderIcon in current Jenkins',
    },
  },
  {
    source: 'jenkinsci/jenkins test/src/test/resources/hudson/cli/view.xml @711d5774b198b3c9a03d05a3d99d77983c38fcd2',
    golden: '@views/Team/config.xml',
    elements: [
      '/hudson.model.ListView',
      '/hudson.model.ListView/name',
      '/hudson.model.ListView/filterExecutors',
      '/hudson.model.ListView/filterQueue',
      "/hudson.model.ListView/properties[@class='hudson.model.View$PropertyList']",
      "/hudson.model.ListView/jobNames/comparator[@class='hudson.util.CaseInsensitiveComparator']",
      '/hudson.model.ListView/jobNames/string',
      '/hudson.model.ListView/jobFilters',
      '/hudson.model.ListView/columns/hudson.views.StatusColumn',
      '/hudson.model.ListView/columns/hudson.views.WeatherColumn',
      '/hudson.model.ListView/columns/hudson.views.JobColumn',
      '/hudson.model.ListView/columns/hudson.views.LastSuccessColumn',
      '/hudson.model.ListView/columns/hudson.views.LastFailureColumn',
      '/hudson.model.ListView/columns/hudson.views.LastDurationColumn',
      '/hudson.model.ListView/columns/hudson.views.BuildButtonColumn',
      '/hudson.model.ListView/recurse',
    ],
    leftOut: {
      'columns/org.jenkins.ci.plugins.column.console.LastBuildColumn': 'a plugin column outside the columns of docs/jobs.md',
    },
  },
  {
    source:
      'jenkinsci/branch-api-plugin src/test/resources/integration/UpdatingFromXmlTest/config.xml @de3ba79472821ae9e45ee5106c807166f05b1cf6',
    golden: 'team/app-multibranch/config.xml',
    elements: [
      `${MB}/healthMetrics/com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric`,
      `${MB}/healthMetrics/com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric/nonRecursive`,
      `${MB}/icon[@class='jenkins.branch.MetadataActionFolderIcon']`,
      `${MB}/disabled`,
    ],
    leftOut: {
      "sources/data/jenkins.branch.BranchSource/source[@class='jenkins.scm.impl.mock.MockSCMSource']": 'a test SCM; ours is GitSCMSource',
    },
  },
  {
    source:
      'jenkinsci/cloudbees-folder-plugin src/test/resources/com/cloudbees/hudson/plugins/folder/views/DefaultFolderViewHolderTest/oldData/jobs/d/config.xml @dd19bff08faba7f49c8da9deea7680f731520dea',
    golden: 'team/config.xml',
    elements: [
      '/com.cloudbees.hudson.plugins.folder.Folder/healthMetrics/com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric/nonRecursive',
      "/com.cloudbees.hudson.plugins.folder.Folder/icon[@class='com.cloudbees.hudson.plugins.folder.icons.StockFolderIcon']",
    ],
    leftOut: {
      folderViews: 'the default All view, which Jenkins makes for a folder created without one',
    },
  },
  {
    source: 'jenkinsci/job-dsl-plugin job-dsl-core/src/main/resources/javaposse/jobdsl/dsl/Folder-template.xml @70a20a1244a74ad1d27b81b76c2ae49006912c4a',
    golden: 'team/config.xml',
    elements: [
      '/com.cloudbees.hudson.plugins.folder.Folder',
      '/com.cloudbees.hudson.plugins.folder.Folder/actions',
      '/com.cloudbees.hudson.plugins.folder.Folder/properties',
      "/com.cloudbees.hudson.plugins.folder.Folder/icon[@class='com.cloudbees.hudson.plugins.folder.icons.StockFolderIcon']",
      '/com.cloudbees.hudson.plugins.folder.Folder/healthMetrics',
    ],
    leftOut: {
      folderViews: 'the default All view, which Jenkins makes for a folder created without one',
    },
  },
];

