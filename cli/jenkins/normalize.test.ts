import { describe, expect, it } from 'vitest';
import { jenkinsXml } from '../../test/jenkins/simulator.js';
import { tokenFingerprint, withMarker } from './source.js';
import { normalizeXml, sameConfig, withKnownToken } from './normalize.js';

const OURS = `<?xml version="1.0" encoding="UTF-8"?>
<flow-definition>
  <actions/>
  <description>a &amp; b's "job"</description>
  <properties>
    <a.First><x>1</x></a.First>
    <b.Second/>
  </properties>
  <definition class="C"><credentialsId>secret-id</credentialsId></definition>
</flow-definition>
`;

describe('normalizeXml', () => {
  it("treats Jenkins' own serialisation of a config as equal to it", () => {
    const theirs = jenkinsXml(OURS);
    expect(theirs).toContain("version='1.1'");
    expect(theirs).toContain('plugin="workflow-job@');
    expect(theirs).toContain('&apos;s &quot;job&quot;');
    expect(theirs).not.toBe(OURS);
    expect(sameConfig(OURS, theirs)).toBe(true);
  });

  it('ignores plugin attributes, whitespace, empty elements and the order of properties', () => {
    const same =
      '<flow-definition plugin="x@1"><description>a &amp; b&apos;s &quot;job&quot;</description>' +
      '<properties><b.Second/><a.First>\n  <x>1</x>\n</a.First></properties>' +
      '<definition class="C" plugin="y@2"><credentialsId>secret-id</credentialsId></definition></flow-definition>';
    expect(sameConfig(same, OURS)).toBe(true);
    // Outside the containers Jenkins reorders, order is kept.
    const moved = same.replace(/<description>.*<\/description>/, '').replace('</flow-definition>', '<description>a</description></flow-definition>');
    expect(sameConfig(moved, OURS.replace(/<description>.*<\/description>/, '<description>a</description>'))).toBe(false);
  });

  it('sees changed values, attributes and elements', () => {
    expect(sameConfig(OURS, OURS.replace('<x>1</x>', '<x>2</x>'))).toBe(false);
    expect(sameConfig(OURS, OURS.replace('class="C"', 'class="D"'))).toBe(false);
    expect(sameConfig(OURS, OURS.replace('<b.Second/>', '<b.Second/><c.Third/>'))).toBe(true);
    expect(sameConfig(OURS, OURS.replace('<b.Second/>', '<b.Second/><c.Third>on</c.Third>'))).toBe(false);
    expect(sameConfig(OURS, OURS.replace('<description>', '<description> '))).toBe(false);
  });

  // properties: Job.doConfigSubmit rebuilds them in descriptor order; triggers: a list built from
  // Trigger.for_(job); traits and columns: lists the configure form rebuilds from descriptors. Each
  // child here has content, since an empty one is dropped anyway.
  it.each([
    [
      'properties',
      '<hudson.model.ParametersDefinitionProperty><parameterDefinitions><hudson.model.StringParameterDefinition><name>TARGET</name></hudson.model.StringParameterDefinition></parameterDefinitions></hudson.model.ParametersDefinitionProperty>',
      '<jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>10</daysToKeep></strategy></jenkins.model.BuildDiscarderProperty>',
    ],
    ['triggers', '<hudson.triggers.TimerTrigger><spec>H 2 * * *</spec></hudson.triggers.TimerTrigger>', '<hudson.triggers.SCMTrigger><spec>H/5 * * * *</spec></hudson.triggers.SCMTrigger>'],
    [
      'traits',
      '<jenkins.scm.impl.trait.WildcardSCMHeadFilterTrait><includes>main release/*</includes></jenkins.scm.impl.trait.WildcardSCMHeadFilterTrait>',
      '<jenkins.plugins.git.traits.CloneOptionTrait><extension class="hudson.plugins.git.extensions.impl.CloneOption"><shallow>true</shallow></extension></jenkins.plugins.git.traits.CloneOptionTrait>',
    ],
    ['columns', '<jenkins.plugins.extracolumns.DescriptionColumn><displayLength>1</displayLength></jenkins.plugins.extracolumns.DescriptionColumn>', '<hudson.views.StatusColumn><large>true</large></hudson.views.StatusColumn>'],
  ])('takes the children of %s in any order, and sees one changed', (container, first, second) => {
    const config = (children: string) => `<root><${container}>${children}</${container}></root>`;
    expect(sameConfig(config(first + second), config(second + first))).toBe(true);
    expect(sameConfig(config(first + second), config(second + first.replace(/>([^<>]+)</, '>changed<')))).toBe(false);
  });

  // XStream's PrettyPrintWriter writes text escaped, never as CDATA (the simulator does the same):
  // a script sent in CDATA comes back escaped.
  it('reads a CDATA section as the text it holds', () => {
    const ours = '<flow-definition><definition class="org.jenkinsci.plugins.workflow.cps.CpsFlowDefinition"><script><![CDATA[if (a < b && c) { echo "x" }]]></script></definition></flow-definition>';
    const theirs = jenkinsXml(ours);
    expect(theirs).toContain('<script>if (a &lt; b &amp;&amp; c) { echo &quot;x&quot; }</script>');
    expect(sameConfig(ours, theirs)).toBe(true);
    expect(sameConfig(ours, theirs.replace('&lt;', '&gt;'))).toBe(false);
    // Blank in CDATA comes back as blank text, which is no value at all, like an empty element.
    const blank = '<flow-definition><description><![CDATA[ ]]></description></flow-definition>';
    expect(jenkinsXml(blank)).toContain('<description> </description>');
    expect(sameConfig(blank, jenkinsXml(blank))).toBe(true);
    expect(sameConfig(blank, '<flow-definition/>')).toBe(true);
  });

  // XStream's readers skip comments and processing instructions: Jenkins writes none back.
  it('reads no text from comments or processing instructions', () => {
    const ours = '<flow-definition><description>nightly<!-- set by ops --> build</description><keepDependencies><?keep?>false</keepDependencies></flow-definition>';
    expect(sameConfig(ours, jenkinsXml(ours))).toBe(true);
    expect(sameConfig(ours, '<flow-definition><description>nightly build</description><keepDependencies>false</keepDependencies></flow-definition>')).toBe(true);
  });

  // XML 1.0, 2.11: the parser Jenkins reads a posted config with turns CR LF and a lone CR into LF,
  // so a description written with Windows line ends comes back with LF.
  it('reads CR LF and a lone CR as a line feed', () => {
    const description = (text: string) => `<flow-definition><description>${text}</description></flow-definition>`;
    expect(sameConfig(description('line 1\r\nline 2\rline 3'), description('line 1\nline 2\nline 3'))).toBe(true);
    expect(sameConfig(description('line 1\r\nline 2'), description('line 1 line 2'))).toBe(false);
  });

  it('takes an element holding only indentation for an empty one, and keeps text that is not only whitespace', () => {
    const empty = '<flow-definition><actions/><description>d</description></flow-definition>';
    expect(sameConfig('<flow-definition>\n  <actions>\n  \n  </actions>\n  <description>d</description>\n</flow-definition>', empty)).toBe(true);
    expect(sameConfig('<flow-definition><actions> x </actions><description>d</description></flow-definition>', empty)).toBe(false);
  });

  // XStream's converters read an object's fields as child elements (HierarchicalStreamReader.moveDown),
  // never text beside them: Jenkins writes such a config back without that text.
  it('ignores text beside child elements', () => {
    const definition = (stray: string) => `<flow-definition><definition class="C">${stray}<scriptPath>Jenkinsfile</scriptPath></definition></flow-definition>`;
    expect(sameConfig(definition('stray words'), definition(''))).toBe(true);
  });

  // XStream writes `<scm class="hudson.scm.NullSCM"/>` for a field holding an object without fields.
  it('keeps an element whose only content is its attributes', () => {
    expect(sameConfig('<project><scm class="hudson.scm.NullSCM"/></project>', '<project/>')).toBe(false);
    expect(sameConfig('<project><scm class="hudson.scm.NullSCM" plugin="x@1"/></project>', '<project><scm class="hudson.scm.NullSCM"/></project>')).toBe(true);
  });

  // XML 1.0, 3.1: the order of attributes in a start tag is not significant.
  it('takes attributes in any order', () => {
    expect(sameConfig('<a><b class="C" resolves-to="D">1</b></a>', '<a><b resolves-to="D" class="C">1</b></a>')).toBe(true);
    expect(sameConfig('<a><b class="C" resolves-to="D">1</b></a>', '<a><b resolves-to="C" class="D">1</b></a>')).toBe(false);
  });

  // The mask is for display only: two credential ids whose masks are alike (their digests share
  // the first six hex digits) are still two ids, and a change from one to the other is an update.
  it('compares secrets themselves, not their masks', () => {
    const job = (id: string) => `<flow-definition><definition class="C"><credentialsId>${id}</credentialsId></definition></flow-definition>`;
    expect(normalizeXml(job('deploy-key-891'), { mask: true })).toBe(normalizeXml(job('deploy-key-2457'), { mask: true }));
    expect(sameConfig(job('deploy-key-891'), job('deploy-key-2457'))).toBe(false);
    expect(normalizeXml(job('deploy-key-891'))).toContain('<credentialsId>deploy-key-891</credentialsId>');
  });

  it('masks credential ids and tokens, keeping a digest so that a change still shows', () => {
    const masked = normalizeXml(OURS, { mask: true });
    expect(masked).not.toContain('secret-id');
    expect(masked).toMatch(/<credentialsId>\*{4}[0-9a-f]{6}<\/credentialsId>/);
    expect(normalizeXml(OURS.replace('secret-id', 'other-id'), { mask: true })).not.toBe(masked);
  });

  it('masks the trigger token', () => {
    const token = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const masked = normalizeXml(`<flow-definition><authToken>${token}</authToken></flow-definition>`, { mask: true });
    expect(masked).not.toContain(token);
    expect(masked).toMatch(/<authToken>\*{4}[0-9a-f]{6}<\/authToken>/);
  });

  it('masks a user name and token written into a repository address', () => {
    const xml = '<scm><url>https://ci-bot:ghp_s3cret@git.example.com/team/app.git</url><remote>ssh://deploy:pw@git.example.com/x</remote></scm>';
    const masked = normalizeXml(xml, { mask: true });
    expect(masked).not.toContain('ghp_s3cret');
    expect(masked).not.toContain('deploy:pw');
    expect(masked).toMatch(/<url>https:\/\/\*{4}[0-9a-f]{6}@git\.example\.com\/team\/app\.git<\/url>/);
    expect(normalizeXml('<url>https://git.example.com/team/app.git</url>', { mask: true })).toContain('<url>https://git.example.com/team/app.git</url>');
  });

  it('masks the user info of an address anywhere in a text, as an inline script or a description holds it', () => {
    const script = '<script>sh "git clone https://bot:ghp_inline@git.example.com/a.git"\nsh "curl -u x https://u:pw2@repo.example.com/b"</script>';
    const masked = normalizeXml(`<definition>${script}</definition>`, { mask: true });
    expect(masked).not.toContain('ghp_inline');
    expect(masked).not.toContain('u:pw2');
    expect(masked).toMatch(/git clone https:\/\/\*{4}[0-9a-f]{6}@git\.example\.com\/a\.git/);
    expect(masked).toMatch(/https:\/\/\*{4}[0-9a-f]{6}@repo\.example\.com\/b/);
  });

  // hudson.tasks.LogRotator.removeLastBuild (core 2.474) appears in every re-serialised read.
  it('ignores LogRotator.removeLastBuild at its default, and sees it set', () => {
    const rotator = (extra: string) =>
      `<flow-definition><properties><jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>10</daysToKeep>${extra}</strategy></jenkins.model.BuildDiscarderProperty></properties></flow-definition>`;
    expect(sameConfig(rotator(''), rotator('<removeLastBuild>false</removeLastBuild>'))).toBe(true);
    expect(sameConfig(rotator(''), rotator('<removeLastBuild>true</removeLastBuild>'))).toBe(false);
    expect(sameConfig('<x><removeLastBuild>false</removeLastBuild></x>', '<x/>')).toBe(false);
  });

  // Only the field as XStream writes a primitive at its default: no attributes on it.
  it('keeps a removeLastBuild that carries an attribute', () => {
    const rotator = (extra: string) => `<strategy class="hudson.tasks.LogRotator"><daysToKeep>10</daysToKeep>${extra}</strategy>`;
    expect(sameConfig(rotator(''), rotator('<removeLastBuild class="boolean">false</removeLastBuild>'))).toBe(false);
  });

  it('takes an encrypted trigger token for the wanted one only when the marker records that token', () => {
    const token = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const job = (description: string, authToken: string) =>
      `<flow-definition><description>${description.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</description><authToken>${authToken}</authToken></flow-definition>`;
    const desired = job(withMarker('', 's', 'job', token), token);
    const encrypted = '{AQAAABAAAAAwHO3am/wCUoTLrZekB0P5/b7z+Q==}';
    expect(sameConfig(withKnownToken(job(withMarker('', 's', 'job', token), encrypted), desired), desired)).toBe(true);
    const other = job(withMarker('', 's', 'job', 'another-token'), encrypted);
    expect(withKnownToken(other, desired)).toBe(other);
    const unrecorded = job(withMarker('', 's', 'job'), encrypted);
    expect(withKnownToken(unrecorded, desired)).toBe(unrecorded);
    // A token Jenkins gives back in clear (older releases) is compared as it is.
    const plain = job(withMarker('', 's', 'job', token), 'set-by-hand');
    expect(withKnownToken(plain, desired)).toBe(plain);
    expect(tokenFingerprint(token)).not.toBe(tokenFingerprint('set-by-hand'));
  });

  // A file that dropped remoteTriggerUuid, or a description edited in Jenkins without our marker:
  // nothing says the encrypted token is the one the file wants, so the job is an update.
  it('leaves an encrypted token as it is when the file wants none or the live description has no marker', () => {
    const token = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
    const encrypted = '<authToken>{AQAAABAAAAAwHO3am/wCUoTLrZekB0P5/b7z+Q==}</authToken>';
    const description = `<description>${withMarker('', 's', 'job', token)}</description>`;
    const withoutToken = `<flow-definition>${description}</flow-definition>`;
    const live = `<flow-definition>${description}${encrypted}</flow-definition>`;
    expect(withKnownToken(live, withoutToken)).toBe(live);
    const edited = `<flow-definition><description>edited by hand</description>${encrypted}</flow-definition>`;
    expect(withKnownToken(edited, `<flow-definition>${description}<authToken>${token}</authToken></flow-definition>`)).toBe(edited);
    const noDescription = `<flow-definition>${encrypted}</flow-definition>`;
    expect(withKnownToken(noDescription, `<flow-definition>${description}<authToken>${token}</authToken></flow-definition>`)).toBe(noDescription);
  });
});
