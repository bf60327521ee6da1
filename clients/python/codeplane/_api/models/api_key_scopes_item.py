from enum import StrEnum


class ApiKeyScopesItem(StrEnum):
    ANALYSESREAD = "analyses:read"
    ANALYSESWRITE = "analyses:write"
    ENVREAD = "env:read"
    ENVWRITE = "env:write"
    INTEGRATIONSREAD = "integrations:read"
    INTEGRATIONSWRITE = "integrations:write"
    KEYSWRITE = "keys:write"
    NOTIFICATIONSREAD = "notifications:read"
    NOTIFICATIONSWRITE = "notifications:write"
    REPOSITORIESREAD = "repositories:read"
    REPOSITORIESWRITE = "repositories:write"
    RUNSREAD = "runs:read"
    RUNSWRITE = "runs:write"

    def __str__(self) -> str:
        return str(self.value)
