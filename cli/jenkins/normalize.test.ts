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

  it('masks credential ids and tokens, keeping a digest so that a change still shows', () => {
    const masked = normalizeXml(OURS, { mask: true });
    expect(masked).not.toContain('secret-id');
    expect(masked).toMatch(/<credentialsId>\*{4}[0-9a-f]{6}<\/credentialsId>/);
    expect(normalizeXml(OURS.replace('secret-id', 'other-id'), { mask: true })).not.toBe(masked);
  });

  it('masks a user name and token written into a repository address', () => {
    const xml = '<scm><url>https://ci-bot:ghp_s3cret@git.example.com/team/app.git</url><remote>ssh://deploy:pw@git.example.com/x</remote></scm>';
    const masked = normalizeXml(xml, { mask: true });
    expect(masked).not.toContain('ghp_s3cret');
    expect(masked).not.toContain('deploy:pw');
    expect(masked).toMatch(/<url>https:\/\/\*{4}[0-9a-f]{6}@git\.example\.com\/team\/app\.git<\/url>/);
    expect(normalizeXml('<url>https://git.example.com/team/app.git</url>', { mask: true })).toContain('<url>https://git.example.com/team/app.git</url>');
  });

  // hudson.tasks.LogRotator.removeLastBuild (core 2.474) appears in every re-serialised read.
  it('ignores LogRotator.removeLastBuild at its default, and sees it set', () => {
    const rotator = (extra: string) =>
      `<flow-definition><properties><jenkins.model.BuildDiscarderProperty><strategy class="hudson.tasks.LogRotator"><daysToKeep>10</daysToKeep>${extra}</strategy></jenkins.model.BuildDiscarderProperty></properties></flow-definition>`;
    expect(sameConfig(rotator(''), rotator('<removeLastBuild>false</removeLastBuild>'))).toBe(true);
    expect(sameConfig(rotator(''), rotator('<removeLastBuild>true</removeLastBuild>'))).toBe(false);
    expect(sameConfig('<x><removeLastBuild>false</removeLastBuild></x>', '<x/>')).toBe(false);
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
});
