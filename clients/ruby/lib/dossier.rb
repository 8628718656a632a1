# frozen_string_literal: true

require_relative "dossier/version"
require_relative "dossier/errors"
require_relative "dossier/response"
require_relative "dossier/transport"
require_relative "dossier/client"
require_relative "dossier/webhook"

# Ruby client for the Dossier v1 HTTP API. Start with Dossier::Client.
module Dossier
end
