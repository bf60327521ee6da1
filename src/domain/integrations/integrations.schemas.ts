import { z } from "zod";
import { repositorySchema } from "../repositories/repositories.schemas.ts";

export const integrationSchema = z
  .object({
    id: z.uuid(),
    provider: z.enum(["github"]),
    installation_id: z.number().int().meta({ description: "GitHub's id of the App installation." }),
    account_login: z.string().meta({ description: "The GitHub user or organization the App is installed on." }),
    account_type: z.string().meta({ description: "`User`, `Organization` or `Enterprise`." }),
    repository_selection: z.string().meta({ description: "`all` or `selected`: which of the account's repositories the installation can see." }),
    suspended: z.boolean().meta({ description: "Suspended on GitHub: its repositories are not fetched until it is unsuspended." }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Integration" });
export type Integration = z.infer<typeof integrationSchema>;

export const installUrlSchema = z
  .object({
    install_url: z
      .string()
      .meta({ description: "Where a person installs the GitHub App; its `state` is bound to this account and expires with `expires_at`." }),
    expires_at: z.iso.datetime().meta({ description: "When the `state` in the URL stops being accepted by the callback (one hour)." }),
  })
  .meta({ id: "GitHubInstallUrl" });

const installationId = z.coerce.number({ message: "Input should be a valid integer" }).int().min(1).max(Number.MAX_SAFE_INTEGER);

export const connectGitHubSchema = z
  .strictObject({ installation_id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).meta({ description: "GitHub's id of the App installation." }) })
  .meta({ id: "ConnectGitHubInstallation" });

export const callbackQuerySchema = z.strictObject({
  installation_id: installationId.optional().meta({ description: "Set by GitHub; absent when an organization owner still has to approve the installation." }),
  setup_action: z.enum(["install", "update", "request"]).optional(),
  state: z.string().min(1).max(1024),
  // GitHub adds `code` when the App asks for user authorization during installation; not used.
  code: z.string().max(1024).optional(),
});

export const installationRepositorySchema = z
  .object({
    github_id: z.number().int().meta({ description: "GitHub's id of the repository." }),
    full_name: z.string().meta({ description: "owner/name" }),
    name: z.string(),
    owner: z.string(),
    private: z.boolean(),
    default_branch: z.string().nullable(),
    html_url: z.string(),
    repository_id: z.uuid().nullable().meta({ description: "The codeplane repository registered from it through this integration, if any." }),
  })
  .meta({ id: "InstallationRepository" });
export type InstallationRepository = z.infer<typeof installationRepositorySchema>;

export const registerInstallationRepositorySchema = z
  .strictObject({
    full_name: z
      .string()
      .min(3)
      .max(200)
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, "must be owner/name")
      .meta({ description: "The repository as GitHub names it: owner/name." }),
    auto_analyze: z.boolean().optional().meta({ description: "Analyse pushes and pull requests from webhooks (default false)." }),
    report_check_runs: z
      .boolean()
      .optional()
      .meta({ description: "Report each run of the repository as a check run on its commit (default false; docs/users/github.md)." }),
  })
  .meta({ id: "RegisterInstallationRepository" });
export type RegisterInstallationRepositoryInput = z.infer<typeof registerInstallationRepositorySchema>;

export { repositorySchema };
