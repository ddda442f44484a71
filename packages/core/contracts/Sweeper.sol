// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20, safeTransferFrom} from "./IERC20.sol";

/// @title Sweeper
/// @notice Buys small token balances ("dust") for ETH. A holder approves this contract to take a token; the operator
///         posts, per token, the rate at which it may be taken; then anyone (a taker) may sweep: the taker receives
///         the tokens and pays ETH at no less than the posted rate, which goes to the holder less a fee.
/// @dev Trust: holders rely on the operator's rates, and they bound what can be taken by the allowance they give.
///      The contract holds nothing between calls. A rate of zero means the token is not taken.
contract Sweeper {
    /// @dev Rates are in wei per RATE_UNIT base units of the token, so that tokens worth far less than a wei per
    ///      base unit (a token with 18 decimals and a low price) can still be priced.
    uint256 public constant RATE_UNIT = 1e18;

    /// @dev The fee is expressed in basis points of the ETH paid.
    uint256 private constant BPS = 10_000;

    /// @notice The account allowed to post rates.
    address public immutable operator;

    /// @notice Where fees go.
    address public immutable feeRecipient;

    /// @notice The fee, in basis points of the ETH a taker pays.
    uint256 public immutable feeBps;

    /// @notice The rate of each token: wei per RATE_UNIT base units; zero when the token is not taken.
    mapping(address token => uint256) public rates;

    /// @notice Emitted when the operator posts the rate of `token`.
    event RateSet(address indexed token, uint256 rate);

    /// @notice Emitted for every sweep: `taker` took `amount` of `token` from `holder` and paid `ethPaid` wei, of
    ///         which `fee` went to the fee recipient and the rest to the holder.
    event Swept(
        address indexed holder, address indexed token, address indexed taker, uint256 amount, uint256 ethPaid, uint256 fee
    );

    /// @notice The caller is not the operator.
    error NotOperator();

    /// @notice A constructor argument is out of range.
    error InvalidConfig();

    /// @notice No rate is posted for `token`.
    error NoRate(address token);

    /// @notice A sweep of nothing.
    error ZeroAmount();

    /// @notice The ETH sent is below the `required` price of the amount at the posted rate.
    error Underpaid(uint256 sent, uint256 required);

    /// @notice Taking the tokens from the holder failed; `reason` is the token's revert or return data.
    error TokenTransferFailed(bytes reason);

    /// @notice Paying ETH to `to` failed with `reason`.
    error EtherTransferFailed(address to, bytes reason);

    /// @param operator_ The account allowed to post rates.
    /// @param feeRecipient_ Where fees go.
    /// @param feeBps_ The fee in basis points, at most 10 000.
    constructor(address operator_, address feeRecipient_, uint256 feeBps_) {
        if (operator_ == address(0) || feeRecipient_ == address(0) || feeBps_ > BPS) revert InvalidConfig();
        operator = operator_;
        feeRecipient = feeRecipient_;
        feeBps = feeBps_;
    }

    /// @notice Posts the rate of `token` in wei per RATE_UNIT base units; zero stops sweeps of it. Operator only.
    function setRate(IERC20 token, uint256 rate) external {
        if (msg.sender != operator) revert NotOperator();
        rates[address(token)] = rate;
        emit RateSet(address(token), rate);
    }

    /// @notice The least ETH, in wei, a taker must pay for `amount` of `token` at its posted rate, rounded up.
    function priceOf(IERC20 token, uint256 amount) public view returns (uint256) {
        uint256 rate = rates[address(token)];
        if (rate == 0) revert NoRate(address(token));
        return (amount * rate + RATE_UNIT - 1) / RATE_UNIT;
    }

    /// @notice Takes `amount` of `token` from `holder` for the caller, paying `msg.value` (at least `priceOf`) to the
    ///         holder less the fee. The holder must have approved this contract for `amount`.
    function sweep(IERC20 token, address holder, uint256 amount) external payable {
        if (amount == 0) revert ZeroAmount();
        uint256 required = priceOf(token, amount);
        if (msg.value < required) revert Underpaid(msg.value, required);
        uint256 fee = msg.value * feeBps / BPS;

        (bool taken, bytes memory reason) = safeTransferFrom(token, holder, msg.sender, amount);
        if (!taken) revert TokenTransferFailed(reason);
        emit Swept(holder, address(token), msg.sender, amount, msg.value, fee);

        _sendEther(holder, msg.value - fee);
        if (fee > 0) _sendEther(feeRecipient, fee);
    }

    function _sendEther(address to, uint256 value) private {
        (bool success, bytes memory reason) = to.call{value: value}("");
        if (!success) revert EtherTransferFailed(to, reason);
    }
}
