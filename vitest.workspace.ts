// The test projects: one per package (packages/*/vitest.config.ts, each merging vitest.shared.ts).
export default ["packages/*/vitest.config.ts"]
