# frozen_string_literal: true

module Dossier
  # The gem's version; also sent in the User-Agent header as "dossier-ruby/<VERSION>".
  VERSION = "0.1.0"
end
