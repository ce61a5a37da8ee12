/**
 * An instance's tags as chips. With `onPick`, each chip is a button that filters by its tag (the
 * instances list); without, a link to the instances carrying it (the instance page).
 */
export function TagChips({ tags, onPick }: { tags: readonly string[]; onPick?: (tag: string) => void }) {
  if (tags.length === 0) return <span class="muted">—</span>;
  return (
    <span class="tags">
      {tags.map((tag) =>
        onPick ? (
          <button type="button" class="tag" title={`Show instances tagged ${tag}`} onClick={() => onPick(tag)}>
            {tag}
          </button>
        ) : (
          <a class="tag" href={`/instances?tag=${encodeURIComponent(tag)}`} title={`Instances tagged ${tag}`}>
            {tag}
          </a>
        ),
      )}
    </span>
  );
}
