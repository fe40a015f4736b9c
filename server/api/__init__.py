"""The JSON API: one controller per resource."""
from __future__ import annotations

from server.api import audit, experiments, health, replay
from server.api.bots import BotController
from server.api.flow_tests import FlowTestsController
from server.api.flows import FlowController
from server.api.simulate import SimulateController
from server.api.translations import TranslationController
from server.api.uploads import UploadController
from server.api.users import UserController
from server.api.versions import VersionController

ROUTES: list = [*health.ROUTES, FlowController, VersionController, SimulateController, FlowTestsController,
                BotController, UserController, UploadController, *audit.ROUTES, *replay.ROUTES,
                *experiments.ROUTES, TranslationController]
